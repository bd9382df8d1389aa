package dev.radixserve.model.gguf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.model.ForwardBatch;
import dev.radixserve.model.LlamaConfig;
import dev.radixserve.model.OnnxModelRunner;
import dev.radixserve.model.quant.OffsetWeight;
import dev.radixserve.model.quant.Q4KRepacker;
import dev.radixserve.model.quant.QuantMode;
import dev.radixserve.model.quant.QuantSpec;
import dev.radixserve.model.quant.WeightLayout;
import dev.radixserve.model.weights.LoadedModel;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
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
          assertEquals(fileCode(info.data(), rowAt, in), w.codes().code(in, out),
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

  /**
   * GPT-2 with Q4_K MLP down projections (the Q8_0 fixture's ffn_down, K = 256, rewritten as
   * random Q4_K blocks with sane scales): served from Conv1D's transposed view, the codes are the
   * file's rows as they lie and dequantize to its weights bit for bit; the model's logits stay
   * near the same file served as its dequantized weights at fp32 (its other layers at int8), as
   * near as all-int8 and far nearer than int4 (max |Δ logit| / max |logit|: measured 0.010,
   * 0.012 all-int8, 0.059 int4).
   */
  @Test
  void gpt2Q4KProjectionsAreServedOnTheirCodes(@TempDir Path tmp) throws IOException {
    Random random = new Random(11);
    Path file = GgufTestFiles.rewrite("gpt2-q8_0.gguf", tmp.resolve("q4k.gguf"), kv -> { },
        t -> t.replaceAll(e -> {
          if (!e.name().endsWith("ffn_down.weight")) {
            return e;
          }
          int n = (int) e.ne()[1];
          int superBlocks = (int) e.ne()[0] / 256;
          byte[] raw = new byte[n * superBlocks * GgmlType.Q4_K.typeSize()];
          random.nextBytes(raw);
          for (int at = 0; at < raw.length; at += GgmlType.Q4_K.typeSize()) {
            short d = Float.floatToFloat16(0.0004f + random.nextFloat() * 0.0004f);
            short dmin = Float.floatToFloat16(0.0004f + random.nextFloat() * 0.0004f);
            raw[at] = (byte) d;
            raw[at + 1] = (byte) (d >> 8);
            raw[at + 2] = (byte) dmin;
            raw[at + 3] = (byte) (dmin >> 8);
          }
          return new GgufTestFiles.Entry(e.name(), e.ne(), GgmlType.Q4_K, raw);
        }));
    try (LoadedModel m = GgufModelLoader.load(file); Arena arena = Arena.ofConfined()) {
      int layers = m.weights().config().nLayer();
      assertEquals(layers, m.weights().offsetWeights().size(), m.weights().offsetWeights()
          .toString());
      GgufFile f = GgufFile.map(file, arena);
      String name = "h.1.mlp.c_proj.weight";
      GgufFile.TensorInfo info = GgufTensorNames.canonical(f, "gpt2").get(name);
      int k = (int) info.ne()[0];
      int n = (int) info.ne()[1];
      OffsetWeight w = Q4KRepacker.repack(m.weights().tensor(name), WeightLayout.IN_OUT);
      float[] row = new float[k];
      for (int out = 0; out < n; out++) {
        GgufBlocks.dequantizeRow(info, out, row);
        for (int in = 0; in < k; in++) {
          assertEquals(fileCode(info.data(), out * GgmlType.Q4_K.rowBytes(k), in),
              w.codes().code(in, out), name + " code (" + out + ", " + in + ")");
          assertEquals(row[in], w.dequantized(in, out), name + " (" + out + ", " + in + ")");
        }
      }
      long hidden = m.weights().config().hiddenSize();
      QuantSpec served = QuantSpec.forModel(QuantSpec.none(), null, m.weights().requantizeAs(),
          m.weights().offsetWeights(), QuantSpec.CPU_ACCURACY_LEVEL, QuantSpec.HeadSetting.AUTO)
          .resolvedFor(hidden);
      int[] prompt = m.tokenizer().encode("The quick brown fox jumps over the lazy dog.");
      float[] exact = lastLogits(m, QuantSpec.none(), prompt);
      double offsets = relativeError(lastLogits(m, served, prompt), exact);
      double int8 = relativeError(lastLogits(m, served.withOffsetWeights(Set.of()), prompt),
          exact);
      double int4 = relativeError(lastLogits(m, QuantSpec.of(QuantMode.INT4).resolvedFor(hidden),
          prompt), exact);
      assertTrue(offsets > 0 && offsets < 0.03, "offsets: " + offsets);
      assertTrue(offsets < int4 / 3, "offsets " + offsets + " against int4 " + int4);
    }
  }

  private static float[] lastLogits(LoadedModel m, QuantSpec spec, int[] prompt) {
    try (OnnxModelRunner runner = OnnxModelRunner.create(m.weights(), 4, 8, 1, Map.of(),
        spec)) {
      return runner.forward(new ForwardBatch(List.of(new ForwardBatch.Seq(prompt, 0,
          new int[] {3, 1, 6, 0, 2, 7, 5, 4}))))[0];
    }
  }

  /** max |a − b| / max |b|. */
  private static double relativeError(float[] actual, float[] expected) {
    double diff = 0;
    double ref = 0;
    for (int i = 0; i < expected.length; i++) {
      diff = Math.max(diff, Math.abs(actual[i] - expected[i]));
      ref = Math.max(ref, Math.abs(expected[i]));
    }
    return diff / ref;
  }

  /**
   * Code {@code in} of a row of {@code block_q4_K} at {@code rowAt}, as ggml's {@code
   * dequantize_row_q4_K} reads it: super-blocks of 144 bytes (fp16 d, fp16 dmin, 12 bytes of
   * scales, 128 of qs); each 64 weights take 32 bytes of qs, the first 32 their low nibbles,
   * the next 32 their high nibbles.
   */
  static int fileCode(MemorySegment data, long rowAt, int in) {
    int within = in % 256;
    long qs = rowAt + (long) (in / 256) * 144 + 16 + 32L * (within / 64);
    int q = data.get(ValueLayout.JAVA_BYTE, qs + within % 32) & 0xff;
    return within % 64 < 32 ? q & 15 : q >>> 4;
  }
}
