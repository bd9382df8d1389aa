package dev.radixserve.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.model.weights.GptWeights;
import dev.radixserve.model.weights.RandomGpt2;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class RunnerWarmupTest {

  /** One head of 64: the kernel's unrolled path, as GPT-2's. */
  private static final ModelConfig C = new ModelConfig(2, 1, 64, 128, 97, 1e-5, "gelu_new");

  @Test
  void aWarmedRunnerComputesExactlyWhatAColdOneDoesOnTheBlocksTheWarmupUsed() {
    try (GptWeights w = RandomGpt2.create(C, 5);
        OnnxModelRunner warm = OnnxModelRunner.create(w, 16, 24, 1);
        OnnxModelRunner cold = OnnxModelRunner.create(w, 16, 24, 1)) {
      RunnerWarmup.Result r = RunnerWarmup.run(warm, Duration.ofMinutes(1), 6);
      assertEquals(6, r.steps());
      assertTrue(r.took().toNanos() > 0);
      // a request on blocks the warm-up wrote: a prompt, then two decode steps
      int[] table = {2, 0, 1, 5};
      int[] prompt = new int[40];
      for (int i = 0; i < prompt.length; i++) {
        prompt[i] = (i * 13 + 5) % C.vocabSize();
      }
      List<ForwardBatch> steps = List.of(
          new ForwardBatch(List.of(new ForwardBatch.Seq(prompt, 0, table, true))),
          new ForwardBatch(List.of(new ForwardBatch.Seq(new int[] {7}, 40, table))),
          new ForwardBatch(List.of(new ForwardBatch.Seq(new int[] {8}, 41, table))));
      for (ForwardBatch step : steps) {
        assertArrayEquals(cold.forward(step), warm.forward(step));
      }
    }
  }

  @Test
  void aPoolTooSmallForThreeSequencesIsLeftAlone() {
    try (GptWeights w = RandomGpt2.create(C, 5);
        OnnxModelRunner runner = OnnxModelRunner.create(w, 1, 2, 1)) {
      assertEquals(0, RunnerWarmup.run(runner, Duration.ofMinutes(1), 6).steps());
    }
  }
}
