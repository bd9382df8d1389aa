package dev.radixserve.model.gguf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.radixserve.model.quant.CheckpointRepacker;
import dev.radixserve.model.quant.GgmlBlockRepacker;
import dev.radixserve.model.quant.QuantizedWeight;
import dev.radixserve.model.quant.WeightLayout;
import java.io.IOException;
import java.lang.foreign.Arena;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Q8_0 and Q4_0 projections served in their own blocks: the MatMulNBits layer they are repacked
 * into reads back, weight for weight and bit for bit, what gguf-py's dequantize makes of the
 * file's tensor; and the fp32 dequantization (embeddings, heads) is the same bits too.
 */
class GgufBlocksTest {

  @ParameterizedTest(name = "{0}-{1} {2}")
  @CsvSource({"llama3, q8_0, blk.0.attn_q.weight, layers.0.self_attn.q_proj.weight",
      "llama3, q8_0, blk.1.ffn_down.weight, layers.1.mlp.down_proj.weight",
      "llama3, q4_0, blk.0.attn_q.weight, layers.0.self_attn.q_proj.weight",
      "llama3, q4_0, blk.1.ffn_down.weight, layers.1.mlp.down_proj.weight",
      "qwen2, q8_0, blk.0.attn_q.weight, layers.0.self_attn.q_proj.weight",
      "qwen2, q4_0, blk.1.ffn_down.weight, layers.1.mlp.down_proj.weight",
      "gpt2, q8_0, blk.0.attn_qkv.weight, h.0.attn.c_attn.weight",
      "gpt2, q8_0, blk.1.ffn_up.weight, h.1.mlp.c_fc.weight",
      "gpt2, q4_0, blk.0.attn_qkv.weight, h.0.attn.c_attn.weight"})
  void repackedLayerEqualsTheDequantizedFileTensorBitForBit(String model, String type,
      String fileName, String canonical) throws IOException {
    JsonNode want = new ObjectMapper().readTree(GgufTestFiles.fixtures()
        .resolve(model + "-" + type + "-dequantized.json").toFile()).get(fileName);
    int rows = want.get("shape").get(0).asInt();
    int k = want.get("shape").get(1).asInt();
    JsonNode bits = want.get("f32_bits");
    try (Arena arena = Arena.ofConfined()) {
      GgufFile f = GgufFile.map(GgufTestFiles.fixtures().resolve(model + "-" + type + ".gguf"),
          arena);
      String arch = (String) f.get(GgufKeys.ARCHITECTURE);
      GgufTensors tensors = GgufTensors.read(f, arch, arena);
      // nothing copied at load: the projection is the file's own blocks, in its mapping
      dev.radixserve.model.weights.Tensor stored = tensors.tensors().get(canonical);
      GgufFile.TensorInfo info = f.tensors().stream().filter(x -> x.name().equals(fileName))
          .findFirst().orElseThrow();
      assertTrue(stored.data().isMapped(), canonical);
      assertEquals(info.data().address(), stored.data().address(), canonical);
      assertEquals(info.data().byteSize(), stored.data().byteSize(), canonical);
      // GPT-2's projection reads as Conv1D's [K, N]; the repacker reads the file's rows
      QuantizedWeight w = CheckpointRepacker.repack(tensors.quantization(),
          CheckpointRepacker.moduleOf(canonical),
          arch.equals("gpt2") ? WeightLayout.IN_OUT : WeightLayout.OUT_IN, tensors.tensors());
      assertEquals(type.equals("q8_0") ? 8 : 4, w.bits());
      assertEquals(32, w.blockSize());
      assertEquals(k, w.k());
      assertEquals(rows, w.n());
      // llama's q rows come back in transformers' order: canonical row n is the file's row
      boolean permuted = arch.equals("llama") && fileName.contains("attn_q");
      GgufBlocks.RowMap fileRow = permuted
          ? GgufBlocks.unpermute(rows, ((dev.radixserve.model.LlamaConfig) tensors.config()).nHeads()) : GgufBlocks.IN_PLACE;
      int checked = 0;
      for (int n = 0; n < rows; n++) {
        int r = fileRow.sourceRow(n);
        for (int kk = 0; kk < k; kk++) {
          int expected = (int) bits.get(r * k + kk).asLong();
          assertEquals(expected, Float.floatToRawIntBits(w.dequantized(kk, n)),
              fileName + " row " + r + " (canonical " + n + ") input " + kk);
          checked++;
        }
      }
      assertEquals(rows * k, checked);
      if (arch.equals("gpt2")) {
        // the floats a session that does not repack reads: Conv1D's [in, out], column n the
        // file's row n
        assertArrayEquals(new long[] {k, rows}, stored.shape(), canonical);
        float[] in = new float[rows];
        for (int kk = 0; kk < k; kk++) {
          stored.readRow(kk, in);
          for (int n = 0; n < rows; n++) {
            assertEquals((int) bits.get(n * k + kk).asLong(), Float.floatToRawIntBits(in[n]),
                canonical + " input " + kk + " output " + n);
          }
        }
      }
      // the same file tensor dequantized to fp32 by ggml's formula, row by row in file order
      GgufFile.TensorInfo t = f.tensors().stream().filter(x -> x.name().equals(fileName))
          .findFirst().orElseThrow();
      float[] row = new float[k];
      for (int r = 0; r < rows; r++) {
        GgufBlocks.dequantizeRow(t, r, row);
        for (int kk = 0; kk < k; kk++) {
          assertEquals((int) bits.get(r * k + kk).asLong(), Float.floatToRawIntBits(row[kk]),
              fileName + " row " + r + " input " + kk);
        }
      }
    }
  }

  /**
   * A projection repacked in ranges of a few rows on the common pool (as a large table is at
   * load) is the same bytes as repacked in one range: rows in file order or unpermuted.
   */
  @ParameterizedTest(name = "{0}-{1} {2}")
  @CsvSource({"llama3, q8_0, layers.0.self_attn.q_proj.weight",
      "llama3, q4_0, layers.0.self_attn.q_proj.weight",
      "llama3, q4_0, layers.1.mlp.down_proj.weight"})
  void aRepackInRangesIsTheRepackInOne(String model, String type, String canonical) {
    try (Arena arena = Arena.ofShared()) {
      GgufFile f = GgufFile.map(GgufTestFiles.fixtures().resolve(model + "-" + type + ".gguf"),
          arena);
      GgufTensors tensors = GgufTensors.read(f, (String) f.get(GgufKeys.ARCHITECTURE), arena);
      dev.radixserve.model.weights.Tensor t = tensors.tensors().get(canonical);
      assertTrue(t.rowsInParallel(), canonical);
      QuantizedWeight one = GgmlBlockRepacker.repack(t, WeightLayout.OUT_IN, Long.MAX_VALUE);
      QuantizedWeight ranges = GgmlBlockRepacker.repack(t, WeightLayout.OUT_IN,
          3L * t.shape()[1]);
      assertArrayEquals(one.packed(), ranges.packed(), canonical);
      assertArrayEquals(one.scales(), ranges.scales(), canonical);
    }
  }

  /**
   * Q4_1, Q5_0, Q5_1 (quantized by gguf-py) and Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS (block bytes
   * gguf-py wrote), dequantized to fp32 bit for bit as gguf-py's dequantize.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource({"Q4_1", "Q5_0", "Q5_1", "Q4_K", "Q5_K", "Q6_K", "IQ4_NL", "IQ4_XS"})
  void dequantizesEveryServedTypeAsGgufPy(String type) throws IOException {
    JsonNode want = new ObjectMapper().readTree(GgufTestFiles.fixtures().resolve("blocks.json")
        .toFile()).get(type);
    try (Arena arena = Arena.ofConfined()) {
      GgufFile f = GgufFile.map(GgufTestFiles.fixtures().resolve("blocks.gguf"), arena);
      GgufFile.TensorInfo t = f.tensors().stream().filter(x -> x.name().equals(type))
          .findFirst().orElseThrow();
      assertEquals(GgmlType.valueOf(type), t.type());
      int rows = want.get("shape").get(0).asInt();
      int k = want.get("shape").get(1).asInt();
      assertEquals(k, t.ne()[0]);
      float[] row = new float[k];
      int nonzero = 0;
      for (int r = 0; r < rows; r++) {
        GgufBlocks.dequantizeRow(t, r, row);
        for (int kk = 0; kk < k; kk++) {
          assertEquals((int) want.get("f32_bits").get(r * k + kk).asLong(),
              Float.floatToRawIntBits(row[kk]), type + " row " + r + " element " + kk);
          nonzero += row[kk] != 0 ? 1 : 0;
        }
      }
      assertTrue(nonzero > rows * k / 2, "the blocks hold weights, not zeros");
    }
  }

  /** The permutation undone is the converter's LlamaModel.permute inverted: a bijection. */
  @ParameterizedTest(name = "{0} rows, {1} heads")
  @CsvSource({"64, 4", "32, 2", "128, 8"})
  void unpermuteInvertsTheConvertersPermute(int rows, int heads) {
    int d = rows / heads;
    GgufBlocks.RowMap map = GgufBlocks.unpermute(rows, heads);
    // permute: file row h*d + 2j + s holds transformers' row h*d + s*d/2 + j
    for (int h = 0; h < heads; h++) {
      for (int j = 0; j < d / 2; j++) {
        for (int s = 0; s < 2; s++) {
          assertEquals(h * d + 2 * j + s, map.sourceRow(h * d + s * d / 2 + j));
        }
      }
    }
    assertEquals(rows, java.util.stream.IntStream.range(0, rows).map(map::sourceRow).distinct()
        .count());
  }
}
