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
  @CsvSource({"llama3-wide-q4_k_m.gguf, INT8", "llama3-wide-q6_k.gguf, INT8",
      "llama3-wide-iq4_nl.gguf, INT8", "llama3-wide-iq4_xs.gguf, INT8",
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

  /**
   * GPT-2 in blocks no mode takes bit for bit: the Q8_0 fixture with its MLP down projections
   * (K = 256) rewritten as Q6_K blocks. Each projection stays in the file's blocks, read in
   * Conv1D's [in, out] order a column of blocks at a time: requantized (int8, the nearest mode),
   * it is what the block quantizer makes of an fp32 transposed copy; served at fp32, the model
   * computes exactly what the same weights stored as F32 compute.
   */
  @Test
  void gpt2InBlocksNoModeTakesIsReadTransposedFromTheBlocks(@org.junit.jupiter.api.io.TempDir
      java.nio.file.Path tmp) throws java.io.IOException {
    java.util.Random random = new java.util.Random(7);
    java.nio.file.Path mixed = GgufTestFiles.rewrite("gpt2-q8_0.gguf", tmp.resolve("q6k.gguf"),
        kv -> { }, t -> t.replaceAll(e -> {
          if (!e.name().endsWith("ffn_down.weight")) {
            return e;
          }
          int n = (int) e.ne()[1];
          byte[] raw = new byte[n * GgmlType.Q6_K.typeSize()];
          random.nextBytes(raw);
          for (int r = 0; r < n; r++) { // a sane fp16 d per super-block, as blocks.gguf
            short d = Float.floatToFloat16((float) random.nextGaussian() * 0.002f);
            raw[r * 210 + 208] = (byte) d;
            raw[r * 210 + 209] = (byte) (d >> 8);
          }
          return new GgufTestFiles.Entry(e.name(), e.ne(), GgmlType.Q6_K, raw);
        }));
    java.nio.file.Path floats;
    try (Arena arena = Arena.ofConfined()) {
      GgufFile f = GgufFile.map(mixed, arena);
      Map<String, byte[]> dequantized = new java.util.HashMap<>();
      for (GgufFile.TensorInfo t : f.tensors()) {
        if (t.ne().length == 2 && t.name().startsWith("blk.")) {
          float[] row = new float[(int) t.ne()[0]];
          java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate((int) (t.ne()[0] * t.ne()[1] * 4))
              .order(java.nio.ByteOrder.LITTLE_ENDIAN);
          for (int r = 0; r < t.ne()[1]; r++) {
            GgufBlocks.dequantizeRow(t, r, row);
            for (float v : row) {
              b.putFloat(v);
            }
          }
          dequantized.put(t.name(), b.array());
        }
      }
      floats = GgufTestFiles.rewrite(mixed, tmp.resolve("f32.gguf"), kv -> { },
          t -> t.replaceAll(e -> dequantized.containsKey(e.name())
              ? new GgufTestFiles.Entry(e.name(), e.ne(), GgmlType.F32, dequantized.get(e.name()))
              : e));
    }
    try (LoadedModel m = GgufModelLoader.load(mixed); Arena arena = Arena.ofConfined()) {
      assertEquals(QuantMode.INT8, m.weights().requantizeAs());
      assertNull(m.weights().checkpointQuantization(), "mixed: not repacked");
      GgufFile f = GgufFile.map(mixed, arena);
      Map<String, GgufFile.TensorInfo> names = GgufTensorNames.canonical(f, "gpt2");
      for (String name : new String[] {"h.1.mlp.c_proj.weight", "h.0.attn.c_attn.weight"}) {
        Tensor view = m.weights().tensor(name);
        GgufFile.TensorInfo info = names.get(name);
        int k = (int) info.ne()[0];
        int n = (int) info.ne()[1];
        assertArrayEquals(new long[] {k, n}, view.shape(), name + ": Conv1D's [in, out]");
        assertNotNull(view.decoder(), name);
        assertEquals(-1, info.data().mismatch(view.data()), name + ": the file's blocks");
        MemorySegment copy = arena.allocate((long) n * k * 4, 64);
        float[] row = new float[k];
        for (int r = 0; r < n; r++) {
          GgufBlocks.dequantizeRow(info, r, row);
          for (int kk = 0; kk < k; kk++) {
            copy.setAtIndex(ValueLayout.JAVA_FLOAT, (long) kk * n + r, row[kk]);
          }
        }
        Tensor transposed = new Tensor(name, DType.F32, new long[] {k, n}, copy);
        for (int bits : new int[] {8, 4}) {
          QuantizedWeight got = BlockQuantizer.quantize(view, WeightLayout.IN_OUT, bits, 32,
              bits == 4);
          QuantizedWeight want = BlockQuantizer.quantize(transposed, WeightLayout.IN_OUT, bits,
              32, bits == 4);
          assertArrayEquals(want.packed(), got.packed(), name + " int" + bits);
          assertArrayEquals(want.scales(), got.scales(), name + " int" + bits);
          assertArrayEquals(want.zeroPoints(), got.zeroPoints(), name + " int" + bits);
        }
      }
    }
    assertArrayEquals(exactLogits(floats), exactLogits(mixed),
        "fp32 from the blocks equals fp32 from the same weights stored as F32");
  }

  private static float[] exactLogits(java.nio.file.Path file) {
    try (LoadedModel m = GgufModelLoader.load(file);
        dev.radixserve.model.OnnxModelRunner runner = dev.radixserve.model.OnnxModelRunner.create(
            m.weights(), 4, 8, 1, Map.of(), QuantSpec.none())) {
      int[] prompt = m.tokenizer().encode("The quick brown fox jumps over the lazy dog.");
      return runner.forward(new dev.radixserve.model.ForwardBatch(java.util.List.of(
          new dev.radixserve.model.ForwardBatch.Seq(prompt, 0, new int[] {3, 1, 6, 0, 2, 7, 5,
              4}))))[0];
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
