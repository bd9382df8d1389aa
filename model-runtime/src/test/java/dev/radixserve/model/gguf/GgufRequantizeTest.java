package dev.radixserve.model.gguf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.model.LlamaConfig;
import dev.radixserve.model.quant.BlockQuantizer;
import dev.radixserve.model.quant.QuantMode;
import dev.radixserve.model.quant.QuantSpec;
import dev.radixserve.model.quant.QuantizedWeight;
import dev.radixserve.model.quant.WeightLayout;
import dev.radixserve.model.weights.DType;
import dev.radixserve.model.weights.LoadedModel;
import dev.radixserve.model.weights.Tensor;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * K-quant and mixed files at their own bytes: every quantized tensor stays in the file's blocks
 * (a slice of the mapping, decoded a row at a time when read), the file is served in the
 * MatMulNBits mode nearest its blocks, and the requantized weight is exactly what the block
 * quantizer makes of the file's dequantized weights.
 */
class GgufRequantizeTest {

  @ParameterizedTest(name = "{0}")
  @CsvSource({"llama3-wide-q4_k_m.gguf, INT4", "llama3-wide-q6_k.gguf, INT8",
      "llama3-q8_0.gguf, NONE", "llama3-q4_0.gguf, NONE", "llama3-f32.gguf, NONE",
      "qwen2-f16.gguf, NONE"})
  void quantizedTensorsStayInTheFilesBlocks(String file, QuantMode mode) {
    try (LoadedModel m = GgufModelLoader.load(GgufTestFiles.fixtures().resolve(file));
        Arena arena = Arena.ofConfined()) {
      assertEquals(mode, m.weights().requantizeAs(), file);
      GgufFile f = GgufFile.map(GgufTestFiles.fixtures().resolve(file), arena);
      Map<String, GgufFile.TensorInfo> names = GgufTensorNames.canonical(f,
          (String) f.get(GgufKeys.ARCHITECTURE));
      int decoded = 0;
      for (Map.Entry<String, GgufFile.TensorInfo> e : names.entrySet()) {
        Tensor t = m.weights().tensors().get(e.getKey());
        GgufFile.TensorInfo info = e.getValue();
        if (t == null || info.ne().length != 2) {
          continue; // repacked into GPTQ tensors, or a norm
        }
        boolean blocks = info.type() != GgmlType.F32 && info.type() != GgmlType.F16
            && info.type() != GgmlType.BF16;
        if (blocks) {
          assertNotNull(t.decoder(), e.getKey() + " (" + info.type() + ") is read from its blocks");
          assertEquals(info.data().byteSize(), t.data().byteSize(), e.getKey() + ": file bytes");
          assertEquals(-1, info.data().mismatch(t.data()), e.getKey() + ": the file's blocks");
          decoded++;
        }
      }
      assertTrue(!file.contains("_k") || decoded > 0, "some tensors of " + file + " are blocks");
    }
  }

  /**
   * The q projection (rows permuted by the converter) and a down projection of the Q4_K_M file:
   * quantized from the decoded tensor, the codes, scales and zero points equal those quantized
   * from an fp32 copy of the file's rows (ggml's dequantization, rows put back in transformers'
   * order); and each weight read back is within half a step of the file's own value.
   */
  @ParameterizedTest(name = "{0} int{1}")
  @CsvSource({"layers.0.self_attn.q_proj.weight, 4", "layers.0.mlp.down_proj.weight, 4",
      "layers.0.mlp.down_proj.weight, 8", "embed_tokens.weight, 8"})
  void requantizedWeightIsTheQuantizerOfTheDequantizedRows(String name, int bits) {
    String file = "llama3-wide-q4_k_m.gguf";
    try (LoadedModel m = GgufModelLoader.load(GgufTestFiles.fixtures().resolve(file));
        Arena arena = Arena.ofConfined()) {
      Tensor decoded = m.weights().tensor(name);
      assertNotNull(decoded.decoder());
      GgufFile f = GgufFile.map(GgufTestFiles.fixtures().resolve(file), arena);
      GgufFile.TensorInfo info = GgufTensorNames.canonical(f, "llama").get(name);
      int n = (int) info.ne()[1];
      int k = (int) info.ne()[0];
      GgufBlocks.RowMap rows = name.contains("q_proj") ? GgufBlocks.unpermute(n,
          ((LlamaConfig) m.weights().config()).nHeads()) : GgufBlocks.IN_PLACE;
      MemorySegment copy = arena.allocate((long) n * k * 4, 64);
      float[] row = new float[k];
      for (int r = 0; r < n; r++) {
        GgufBlocks.dequantizeRow(info, rows.sourceRow(r), row);
        MemorySegment.copy(row, 0, copy, ValueLayout.JAVA_FLOAT, (long) r * k * 4, k);
      }
      Tensor floats = new Tensor(name, DType.F32, new long[] {n, k}, copy);
      boolean zeroPoints = QuantSpec.defaultZeroPoints(bits == 4 ? QuantMode.INT4
          : QuantMode.INT8);
      QuantizedWeight got = BlockQuantizer.quantize(decoded, WeightLayout.OUT_IN, bits, 32,
          zeroPoints);
      QuantizedWeight want = BlockQuantizer.quantize(floats, WeightLayout.OUT_IN, bits, 32,
          zeroPoints);
      assertArrayEquals(want.packed(), got.packed(), name);
      assertArrayEquals(want.scales(), got.scales(), name);
      assertArrayEquals(want.zeroPoints(), got.zeroPoints(), name);
      for (int out = 0; out < n; out++) {
        for (int in = 0; in < k; in++) {
          float w = copy.getAtIndex(ValueLayout.JAVA_FLOAT, (long) out * k + in);
          float step = Math.abs(got.scale(out, in / 32));
          assertTrue(Math.abs(got.dequantized(in, out) - w) <= step * (zeroPoints ? 0.5f : 1f)
              + 1e-6f, name + " (" + out + ", " + in + ")");
        }
      }
    }
  }

  @Test
  void aFileInBlocksNoModeTakesIsRequantizedUnlessAModeIsConfigured() {
    QuantSpec.HeadSetting auto = QuantSpec.HeadSetting.AUTO;
    assertEquals(QuantSpec.of(QuantMode.INT4), QuantSpec.forModel(QuantSpec.none(), null,
        QuantMode.INT4, QuantSpec.CPU_ACCURACY_LEVEL, auto));
    assertEquals(QuantSpec.of(QuantMode.INT8).withAccuracyLevel(0),
        QuantSpec.forModel(QuantSpec.none(), null, QuantMode.INT8, 0, auto));
    QuantSpec int8 = QuantSpec.of(QuantMode.INT8);
    assertEquals(int8, QuantSpec.forModel(int8, null, QuantMode.INT4, 4, auto),
        "a configured mode is taken as it is");
    assertEquals(QuantMode.NONE, QuantSpec.forModel(QuantSpec.none(), null, QuantMode.INT4, 4,
        new QuantSpec.HeadSetting(false, null)).headMode(), "--quantization-lm-head false");
    assertNull(QuantSpec.forModel(QuantSpec.none(), null, QuantMode.NONE, 4, auto)
        .checkpoint());
    assertEquals(QuantSpec.none(), QuantSpec.forModel(QuantSpec.none(), null, QuantMode.NONE,
        4, auto), "float files stay floats");
  }
}
