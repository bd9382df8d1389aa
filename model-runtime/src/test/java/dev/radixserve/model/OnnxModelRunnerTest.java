package dev.radixserve.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.model.weights.GptWeights;
import dev.radixserve.model.weights.RandomGpt2;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The ONNX Runtime GPT-2 against the independent float64 reference. */
class OnnxModelRunnerTest {

  static final ModelConfig TINY = new ModelConfig(2, 2, 32, 64, 97, 1e-5, "gelu_new");
  static final ModelConfig TINY_ERF = new ModelConfig(2, 4, 32, 64, 97, 1e-5, "gelu");
  static final int BLOCK = 4;

  /** max |a - b| / max |b| over one row. */
  static double relativeError(float[] actual, double[] expected) {
    double maxDiff = 0;
    double maxRef = 0;
    for (int i = 0; i < expected.length; i++) {
      maxDiff = Math.max(maxDiff, Math.abs(actual[i] - expected[i]));
      maxRef = Math.max(maxRef, Math.abs(expected[i]));
    }
    return maxDiff / maxRef;
  }

  /** The largest {@link #relativeError} over the rows (positions) of {@code want}. */
  static double worstRelativeError(float[][] got, float[][] want) {
    double worst = 0;
    for (int p = 0; p < want.length; p++) {
      double[] ref = new double[want[p].length];
      for (int i = 0; i < ref.length; i++) {
        ref[i] = want[p][i];
      }
      worst = Math.max(worst, relativeError(got[p], ref));
    }
    return worst;
  }

  /**
   * Greedy decode through the paged cache: {@code steps} tokens from {@code last} (the logits
   * after {@code position} tokens of the sequence in {@code table}), one forward step each.
   *
   * @param out receives the logits after the last token decoded (length 1)
   */
  static int[] decodeGreedy(OnnxModelRunner runner, float[] last, int position, int[] table,
      int steps, float[][] out) {
    int[] tokens = new int[steps];
    for (int i = 0; i < steps; i++) {
      tokens[i] = argmax(last);
      last = runner.forward(new ForwardBatch(List.of(new ForwardBatch.Seq(
          new int[] {tokens[i]}, position + i, table))))[0];
    }
    out[0] = last;
    return tokens;
  }

  static int[] prompt(int len, int seed) {
    int[] p = new int[len];
    for (int i = 0; i < len; i++) {
      p[i] = (i * 31 + seed * 17 + 5) % 97;
    }
    return p;
  }

  @Test
  void prefillMatchesReference() {
    for (ModelConfig config : List.of(TINY, TINY_ERF)) {
      try (GptWeights w = RandomGpt2.create(config, 7);
          OnnxModelRunner runner = OnnxModelRunner.create(w, BLOCK, 32, 1)) {
        ReferenceGpt2 ref = new ReferenceGpt2(w);
        int[] tokens = prompt(23, 1);
        int[] table = {9, 3, 27, 0, 14, 21};
        float[][] logits = runner.forward(new ForwardBatch(List.of(
            new ForwardBatch.Seq(tokens, 0, table))));
        double[][] expected = ref.logits(tokens);
        double err = relativeError(logits[0], expected[tokens.length - 1]);
        assertTrue(err <= 1e-4, config.activationFunction() + " relative error " + err);
      }
    }
  }

  @Test
  void greedyDecodeMatchesReference() {
    try (GptWeights w = RandomGpt2.create(TINY, 3);
        OnnxModelRunner runner = OnnxModelRunner.create(w, BLOCK, 32, 1)) {
      ReferenceGpt2 ref = new ReferenceGpt2(w);
      int[] tokens = prompt(9, 2);
      int steps = 20;
      int[] table = {30, 2, 17, 8, 25, 11, 4, 19};
      int[] expected = ref.greedy(tokens, steps);
      int[] actual = new int[steps];
      float[][] logits = runner.forward(new ForwardBatch(List.of(
          new ForwardBatch.Seq(tokens, 0, table))));
      for (int i = 0; i < steps; i++) {
        actual[i] = argmax(logits[0]);
        if (i + 1 < steps) {
          logits = runner.forward(new ForwardBatch(List.of(
              new ForwardBatch.Seq(new int[] {actual[i]}, tokens.length + i, table))));
        }
      }
      assertArrayEquals(expected, actual);
    }
  }

  /** The engine's call: the same greedy tokens and bits as {@link #forward}, in reused rows. */
  @Test
  void decodeInReusedRowsGivesTheReferencesTokens() {
    try (GptWeights w = RandomGpt2.create(TINY, 3);
        OnnxModelRunner runner = OnnxModelRunner.create(w, BLOCK, 32, 1);
        OnnxModelRunner fresh = OnnxModelRunner.create(w, BLOCK, 32, 1)) {
      int[] tokens = prompt(9, 2);
      int steps = 12;
      int[] table = {30, 2, 17, 8, 25, 11, 4, 19};
      int[] expected = new ReferenceGpt2(w).greedy(tokens, steps);
      int[] actual = new int[steps];
      float[] firstRow = null;
      ForwardBatch batch = new ForwardBatch(List.of(new ForwardBatch.Seq(tokens, 0, table)));
      for (int i = 0; i < steps; i++) {
        float[][] logits = runner.forwardReusingRows(batch);
        assertArrayEquals(fresh.forward(batch)[0], logits[0]);
        firstRow = firstRow == null ? logits[0] : firstRow;
        assertTrue(firstRow == logits[0], "step " + i + " allocated a new row");
        actual[i] = argmax(logits[0]);
        batch = new ForwardBatch(List.of(
            new ForwardBatch.Seq(new int[] {actual[i]}, tokens.length + i, table)));
      }
      assertArrayEquals(expected, actual);
    }
  }

  static int argmax(float[] v) {
    int best = 0;
    for (int i = 1; i < v.length; i++) {
      if (v[i] > v[best]) {
        best = i;
      }
    }
    return best;
  }
}
