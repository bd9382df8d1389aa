package dev.radixserve.model.gguf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.model.LlamaConfig;
import dev.radixserve.model.quant.OffsetWeight;
import dev.radixserve.model.quant.Q4KRepacker;
import dev.radixserve.model.quant.WeightLayout;
import dev.radixserve.model.weights.LoadedModel;
import java.lang.foreign.Arena;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A Q4_K projection of llama-quantize's Q4_K_M fixture served as MatMulNBits' symmetric int4
 * codes plus a float offset per block ({@link Q4KRepacker}): the codes are the file's q, bit for
 * bit, read here from ggml's {@code block_q4_K} as {@code dequantize_row_q4_K} walks it; and
 * {@code s·(q − 8) + o} equals ggml's {@code d·sc·q − dmin·m} (GgufBlocks, itself checked bit
 * for bit against gguf-py in GgufBlocksTest) bit for bit on every weight of these layers. Why:
 * {@code s = d·sc}, {@code dmin·m} and {@code (q − 8)·s} are fp16 values times 6- and 4-bit
 * integers, exact in float's 24-bit mantissa, so the two sides differ only where {@code o = 8·s
 * − dmin·m} rounds (exponents more than ~7 apart); then by at most 2 ulps of the block's
 * largest term, max(8·|s|, |dmin·m|), the bound a file with such blocks would be held to.
 */
class GgufQ4KBlocksTest {

  static final String FILE = "llama3-wide-q4_k_m.gguf";

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"layers.0.self_attn.q_proj.weight", "layers.0.self_attn.k_proj.weight",
      "layers.0.self_attn.o_proj.weight", "layers.0.mlp.gate_proj.weight",
      "layers.0.mlp.up_proj.weight"})
  void servedCodesAreTheFilesAndDequantizeToItsWeights(String name) {
    try (LoadedModel m = GgufModelLoader.load(GgufTestFiles.fixtures().resolve(FILE));
        Arena arena = Arena.ofConfined()) {
      assertTrue(m.weights().offsetWeights().contains(name), name + " is served on its codes");
      OffsetWeight w = Q4KRepacker.repack(m.weights().tensor(name), WeightLayout.OUT_IN);
      GgufFile f = GgufFile.map(GgufTestFiles.fixtures().resolve(FILE), arena);
      GgufFile.TensorInfo info = GgufTensorNames.canonical(f, "llama").get(name);
      assertEquals(GgmlType.Q4_K, info.type());
      int k = (int) info.ne()[0];
      int n = (int) info.ne()[1];
      LlamaConfig c = (LlamaConfig) m.weights().config();
      GgufBlocks.RowMap rows = name.contains("q_proj") ? GgufBlocks.unpermute(n, c.nHeads())
          : name.contains("k_proj") ? GgufBlocks.unpermute(n, c.kvHeads()) : GgufBlocks.IN_PLACE;
      float[] row = new float[k];
      for (int out = 0; out < n; out++) {
        int source = rows.sourceRow(out);
        long rowAt = source * GgmlType.Q4_K.rowBytes(k);
        GgufBlocks.dequantizeRow(info, source, row);
        for (int in = 0; in < k; in++) {
          assertEquals(GgufTestFiles.q4kCode(info.data(), rowAt, in), w.codes().code(in, out),
              name + " code (" + out + ", " + in + ")");
          float s = w.codes().scale(out, in / 32);
          float o = w.offset(in / 32, out);
          float min = 8 * s - o; // dmin·m up to o's rounding, only for the bound's size
          float ulp = Math.ulp(Math.max(8 * Math.abs(s), Math.abs(min)));
          double ulps = Math.abs(w.dequantized(in, out) - row[in]) / ulp;
          assertTrue(ulps <= 2, name + " (" + out + ", " + in + "): " + w.dequantized(in, out)
              + " against the file's " + row[in] + ", " + ulps + " ulps");
          assertEquals(row[in], w.dequantized(in, out), name + " (" + out + ", " + in + ")");
        }
      }
    }
  }

  /**
   * Only the Q4_K projections of the requantized Q4_K_M file are served on their codes (the
   * Q6_K attn_v/ffn_down and the embedding are not); files served in their own Q4_0/Q8_0 blocks
   * or as floats have none.
   */
  @Test
  void onlyTheQ4KProjectionsOfARequantizedFileAreOffsetWeights() {
    try (LoadedModel m = GgufModelLoader.load(GgufTestFiles.fixtures().resolve(FILE))) {
      Set<String> offsets = m.weights().offsetWeights();
      int layers = m.weights().config().nLayer();
      assertEquals(5 * layers, offsets.size(), offsets.toString());
      assertTrue(!offsets.contains("layers.0.self_attn.v_proj.weight")
          && !offsets.contains("layers.0.mlp.down_proj.weight"), "Q6_K stays requantized");
    }
    for (String file : new String[] {"llama3-q4_0.gguf", "llama3-f32.gguf",
        "llama3-wide-q6_k.gguf"}) {
      try (LoadedModel m = GgufModelLoader.load(GgufTestFiles.fixtures().resolve(file))) {
        assertEquals(Set.of(), m.weights().offsetWeights(), file);
      }
    }
  }
}
