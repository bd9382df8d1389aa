package dev.radixserve.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.model.gguf.GgufModelLoader;
import dev.radixserve.model.graph.GraphDtype;
import dev.radixserve.model.quant.QuantMode;
import dev.radixserve.model.quant.QuantSpec;
import dev.radixserve.model.weights.LoadedModel;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * llama-quantize's Q4_K_M fixture served as {@code --quantization auto} serves it: its Q4_K
 * projections on their own codes with a float offset per block ({@code Linear}'s MatMulNBits +
 * BlockSums·offsets), its Q6_K ones requantized to int8. Against the same file served as its
 * dequantized weights at fp32 ({@code --quantization none}), its logits stay closer than the
 * all-int8 form's and far closer than the int4 re-rounding's (max |Δ logit| / max |logit| over
 * every position, measured 0.028, 0.043 and 0.219; what is left is the int8 activations of
 * accuracy_level 4, the int8 LM head and the Q6_K layers' int8); a prompt prefilled in three
 * chunks gives the same bits as in one (the int8 layers in blocks of 32, see below).
 */
class GgufQ4KServingTest {

  static final String FILE = "llama3-wide-q4_k_m.gguf";
  static final int[] TABLE = {5, 2, 11, 0, 7, 19, 3, 14, 9, 1, 22, 6, 17, 4, 12, 8};

  @Test
  void offsetsFollowTheFilesWeightsAndChunkingChangesNoBit() {
    try (LoadedModel m = GgufModelLoader.load(GgufCheckpointTest.fixtures().resolve(FILE))) {
      long hidden = m.weights().config().hiddenSize();
      QuantSpec served = QuantSpec.forModel(QuantSpec.none(), null, m.weights().requantizeAs(),
          m.weights().offsetWeights(), QuantSpec.CPU_ACCURACY_LEVEL, QuantSpec.HeadSetting.AUTO)
          .resolvedFor(hidden);
      assertEquals(QuantMode.INT8, served.mode(), "the Q6_K layers");
      assertEquals(m.weights().offsetWeights(), served.offsetWeights());
      assertTrue(served.key().contains("/gguf-q4k"), served.key());
      int[] prompt = m.tokenizer().encode("The quick brown fox jumps over the lazy dog, and"
          + " then it runs away into the dark forest.");
      float[][] exact = logits(m, QuantSpec.none(), prompt);
      double offsets = OnnxModelRunnerTest.worstRelativeError(logits(m, served, prompt), exact);
      double int8 = OnnxModelRunnerTest.worstRelativeError(
          logits(m, QuantSpec.of(QuantMode.INT8).resolvedFor(hidden), prompt), exact);
      double int4 = OnnxModelRunnerTest.worstRelativeError(
          logits(m, QuantSpec.of(QuantMode.INT4).resolvedFor(hidden), prompt), exact);
      assertTrue(offsets > 0, "int8 activations and head: not the fp32 computation");
      assertTrue(offsets <= 0.05, "offsets: " + offsets);
      assertTrue(offsets <= int8, "offsets " + offsets + " against all-int8 " + int8);
      assertTrue(offsets < int4 / 3, "offsets " + offsets + " against int4 re-rounded " + int4);

      // the Q6_K layers held at int8 blocks of 32: at int8's default 128 this file's int8
      // layers are not bit-stable across chunking, with or without offsets (nor is main's
      // all-int8 form: measured), while 32 and 64 are; this checks the offsets' own path
      try (OnnxModelRunner runner = OnnxModelRunner.create(m.weights(), 4, 24, 1, Map.of(),
          served.withBlockSize(32))) {
        float[] whole = runner.forward(new ForwardBatch(List.of(
            new ForwardBatch.Seq(prompt, 0, TABLE))))[0];
        int a = prompt.length / 3;
        int b = 2 * prompt.length / 3;
        int[] table2 = {8, 11, 4, 15, 2, 9, 6, 13, 0, 3, 1, 12, 20, 21, 23, 10};
        runner.forward(new ForwardBatch(List.of(new ForwardBatch.Seq(
            Arrays.copyOfRange(prompt, 0, a), 0, table2))));
        runner.forward(new ForwardBatch(List.of(new ForwardBatch.Seq(
            Arrays.copyOfRange(prompt, a, b), a, table2))));
        float[] last = runner.forward(new ForwardBatch(List.of(new ForwardBatch.Seq(
            Arrays.copyOfRange(prompt, b, prompt.length), b, table2))))[0];
        assertArrayEquals(whole, last, 0f, "chunked prefill, bit for bit");
      }
    }
  }

  /**
   * The runner CUDA uses, in fp16 (here on the CPU, at CUDA's accuracy_level 0): the offsets in
   * the graph's fp16, added to MatMulNBits' fp16 product, stay as near the same runner on the
   * file's dequantized weights as the all-int8 form does (measured 0.018 against 0.022, max
   * |Δ logit| / max |logit| of the last position).
   */
  @Test
  void fp16GraphsCarryTheOffsetsInTheirOwnType() {
    Device half = Device.cpu().withDtype(GraphDtype.FLOAT16);
    try (LoadedModel m = GgufModelLoader.load(GgufCheckpointTest.fixtures().resolve(FILE))) {
      long hidden = m.weights().config().hiddenSize();
      QuantSpec served = QuantSpec.forModel(QuantSpec.none(), null, m.weights().requantizeAs(),
          m.weights().offsetWeights(), QuantSpec.accuracyLevelFor(true),
          QuantSpec.HeadSetting.AUTO).resolvedFor(hidden);
      int[] prompt = m.tokenizer().encode("The quick brown fox jumps over the lazy dog.");
      float[] plain = lastLogits(m, half, QuantSpec.none(), prompt);
      double[] ref = new double[plain.length];
      for (int i = 0; i < ref.length; i++) {
        ref[i] = plain[i];
      }
      double offsets = OnnxModelRunnerTest.relativeError(lastLogits(m, half, served, prompt), ref);
      double int8 = OnnxModelRunnerTest.relativeError(lastLogits(m, half,
          served.withOffsetWeights(java.util.Set.of()), prompt), ref);
      assertTrue(offsets > 0 && offsets <= 0.04, "offsets in fp16: " + offsets);
      assertTrue(offsets <= int8, "offsets " + offsets + " against all-int8 " + int8);
    }
  }

  private static float[] lastLogits(LoadedModel m, Device device, QuantSpec spec, int[] prompt) {
    try (BoundModelRunner runner = BoundModelRunner.create(m.weights(), device, 4, 24, 1,
        spec)) {
      return runner.forward(new ForwardBatch(List.of(new ForwardBatch.Seq(prompt, 0, TABLE))))[0];
    }
  }

  /** Every position's logits of {@code prompt} under {@code spec}. */
  static float[][] logits(LoadedModel m, QuantSpec spec, int[] prompt) {
    try (OnnxModelRunner runner = OnnxModelRunner.create(m.weights(), 4, 24, 1, Map.of(),
        spec)) {
      return runner.forward(new ForwardBatch(List.of(
          new ForwardBatch.Seq(prompt, 0, TABLE, true))));
    }
  }
}
