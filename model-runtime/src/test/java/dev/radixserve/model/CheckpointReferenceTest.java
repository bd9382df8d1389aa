package dev.radixserve.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.model.weights.DType;
import dev.radixserve.model.weights.GptWeights;
import dev.radixserve.model.weights.HfModelLoader;
import dev.radixserve.model.weights.HfModelWriter;
import dev.radixserve.model.weights.LoadedModel;
import dev.radixserve.model.weights.RandomGpt2;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Checkpoint variants written to disk, loaded back and run by ONNX Runtime, against the float64
 * reference computed on the loaded weights: every prompt position's logits and a greedy decode.
 */
class CheckpointReferenceTest {

  static final ModelConfig BASE = new ModelConfig(2, 2, 32, 64, 260, 1e-5, "gelu_new");
  static final int BLOCK = 4;

  @TempDir Path dir;

  @Test
  void untiedHeadInF32ShardsMatchesTheReference() {
    try (GptWeights w = RandomGpt2.create(BASE.withUntiedHead(), 21)) {
      HfModelWriter.writeSharded(w, dir, DType.F32, 3);
    }
    assertMatchesReference();
  }

  @Test
  void untiedHeadInBf16MatchesTheReference() {
    try (GptWeights w = RandomGpt2.create(BASE.withUntiedHead(), 22)) {
      HfModelWriter.write(w, dir, DType.BF16, "transformer.");
    }
    assertMatchesReference();
  }

  @Test
  void nInnerWithErfGeluMatchesTheReference() {
    ModelConfig c = new ModelConfig(2, 4, 32, 64, 260, 1e-5, "gelu").withNInner(40);
    try (GptWeights w = RandomGpt2.create(c, 23)) {
      HfModelWriter.write(w, dir, DType.F32);
    }
    assertMatchesReference();
  }

  private void assertMatchesReference() {
    HfModelWriter.writeByteLevelTokenizer(dir);
    try (LoadedModel m = HfModelLoader.load(dir);
        OnnxModelRunner runner = OnnxModelRunner.create(m.weights(), BLOCK, 16, 1)) {
      ReferenceGpt2 ref = new ReferenceGpt2((GptWeights) m.weights());
      int[] prompt = m.tokenizer().encode("Checkpoints load as their config says.");
      int[] table = {3, 9, 1, 14, 7, 0, 12, 5, 11, 2, 15, 4, 8, 6};
      float[][] rows = runner.forward(new ForwardBatch(List.of(
          new ForwardBatch.Seq(prompt, 0, table, true))));
      double[][] expected = ref.logits(prompt);
      for (int p = 0; p < prompt.length; p++) {
        double err = OnnxModelRunnerTest.relativeError(rows[p], expected[p]);
        assertTrue(err <= 1e-4, m.weights().config() + " position " + p + ": relative error " + err);
      }
      int steps = 8;
      int[] actual = OnnxModelRunnerTest.decodeGreedy(runner, rows[prompt.length - 1],
          prompt.length, table, steps, new float[1][]);
      assertArrayEquals(ref.greedy(prompt, steps), actual);
    }
  }
}
