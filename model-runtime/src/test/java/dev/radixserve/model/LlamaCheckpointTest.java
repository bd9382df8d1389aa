package dev.radixserve.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.model.weights.DType;
import dev.radixserve.model.weights.HfModelLoader;
import dev.radixserve.model.weights.HfModelWriter;
import dev.radixserve.model.weights.LlamaWeights;
import dev.radixserve.model.weights.LoadedModel;
import dev.radixserve.model.weights.RandomLlama;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Llama-family checkpoints (each family's config keys and tensor names, random weights) written
 * to disk, loaded back and run by ONNX Runtime against {@link ReferenceLlama} on the loaded
 * weights: every prompt position's logprobs within 1e-4, and a greedy decode through the paged
 * cache equal to the reference's full recomputation (cache on ≡ off).
 */
class LlamaCheckpointTest {

  static final int BLOCK = 4;
  static final LlamaConfig GQA = LlamaFamilies.GQA;

  @TempDir Path dir;

  @Test
  void llama3WithScaledRopeInShardsMatchesTheReference() {
    LlamaConfig c = LlamaFamilies.of("llama");
    try (LlamaWeights w = RandomLlama.create(c, 31)) {
      HfModelWriter.write(w, dir, DType.F32, 3);
    }
    assertMatchesReference();
  }

  @Test
  void smolLm2StyleTiedWithAttentionBiasMatchesTheReference() {
    try (LlamaWeights w = RandomLlama.create(GQA.withTiedEmbeddings().withAttentionBias(), 32)) {
      HfModelWriter.write(w, dir, DType.F32, 1);
    }
    assertMatchesReference();
  }

  /**
   * Every bias a Llama can have (attention_bias and mlp_bias): in the fp32 graph the o_proj and
   * down_proj biases ride in SkipSimplifiedLayerNormalization's bias input.
   */
  @Test
  void llamaWithAttentionAndMlpBiasesMatchesTheReference() {
    LlamaConfig c = new LlamaConfig("llama", GQA.nLayer(), GQA.hiddenSize(), GQA.nHeads(),
        GQA.kvHeads(), GQA.headDim(), GQA.intermediateSize(), GQA.nPositions(), GQA.vocabSize(),
        GQA.rmsNormEps(), GQA.rope(), true, true, true, false, false);
    try (LlamaWeights w = RandomLlama.create(c, 35)) {
      HfModelWriter.write(w, dir, DType.F32, 1);
    }
    assertMatchesReference();
  }

  @Test
  void qwen2WithQkvBiasInBf16MatchesTheReference() {
    LlamaConfig c = LlamaFamilies.of("qwen2");
    try (LlamaWeights w = RandomLlama.create(c, 33)) {
      HfModelWriter.write(w, dir, DType.BF16, 2);
    }
    assertMatchesReference();
  }

  @Test
  void qwen3WithQkNormAndWideHeadsInF16MatchesTheReference() {
    LlamaConfig c = LlamaFamilies.of("qwen3");
    try (LlamaWeights w = RandomLlama.create(c, 34)) {
      HfModelWriter.write(w, dir, DType.F16, 1);
    }
    assertMatchesReference();
  }

  @Test
  void mistralWithOneKvHeadAndLinearRopeMatchesTheReference() {
    LlamaConfig c = LlamaFamilies.of("mistral");
    try (LlamaWeights w = RandomLlama.create(c, 35)) {
      HfModelWriter.write(w, dir, DType.F32, 1);
    }
    assertMatchesReference();
  }

  private void assertMatchesReference() {
    HfModelWriter.writeByteLevelTokenizer(dir);
    try (LoadedModel m = HfModelLoader.load(dir);
        OnnxModelRunner runner = OnnxModelRunner.create(m.weights(), BLOCK, 16, 1)) {
      LlamaWeights weights = (LlamaWeights) m.weights();
      ReferenceLlama ref = new ReferenceLlama(weights);
      int[] prompt = m.tokenizer().encode("Rotary keys enter the pool rotated.");
      int[] table = {3, 9, 1, 14, 7, 0, 12, 5, 11, 2, 15, 4, 8, 6};
      float[][] rows = runner.forward(new ForwardBatch(List.of(
          new ForwardBatch.Seq(prompt, 0, table, true))));
      double[][] expected = ref.logits(prompt);
      for (int p = 0; p < prompt.length; p++) {
        assertLogprobsClose(expected[p], rows[p], weights.config() + " position " + p);
      }
      int steps = 8;
      float[][] after = new float[1][];
      int[] actual = OnnxModelRunnerTest.decodeGreedy(runner, rows[prompt.length - 1],
          prompt.length, table, steps, after);
      float[] last = after[0];
      int[] greedy = ref.greedy(prompt, steps);
      assertArrayEquals(greedy, actual);
      int[] full = Arrays.copyOf(prompt, prompt.length + steps); // the last decode step's input too
      System.arraycopy(greedy, 0, full, prompt.length, steps);
      assertLogprobsClose(ref.logits(full)[full.length - 1], last, "after decoding");
    }
  }

  static void assertLogprobsClose(double[] expectedLogits, float[] actualLogits, String where) {
    double[] expected = ReferenceGpt2.logSoftmax(expectedLogits);
    double[] actual = ReferenceGpt2.logSoftmax(toDoubles(actualLogits));
    double worst = 0;
    for (int i = 0; i < expected.length; i++) {
      worst = Math.max(worst, Math.abs(expected[i] - actual[i]));
    }
    assertTrue(worst <= 1e-4, where + ": logprobs differ by " + worst);
    assertEquals(ReferenceGpt2.argmax(expectedLogits), OnnxModelRunnerTest.argmax(actualLogits), where);
  }

  private static double[] toDoubles(float[] f) {
    double[] d = new double[f.length];
    for (int i = 0; i < f.length; i++) {
      d[i] = f[i];
    }
    return d;
  }
}
