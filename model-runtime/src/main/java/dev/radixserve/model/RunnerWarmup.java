package dev.radixserve.model;

import java.time.Duration;
import java.util.List;

/**
 * Forward steps on scratch tokens before a server takes traffic.
 *
 * <p>Why: the CPU attention kernel is Java, and until the JIT has compiled it, with profiles of
 * both prefill runs and single decode rows, a step is many times slower. Measured on the
 * embedded model: a cold server's first 512-token request took 1.6 s, the next ones 0.15–0.27 s.
 *
 * <pre>
 *   step 2i:    A  prefill of P tokens from position 0           (blocks [0, n))
 *               B  one decode token at position P - 1            (blocks [n, 2n))
 *               C  one decode token at position P / 2 - 1        (blocks [2n, 3n))
 *   step 2i+1:  A  the second half of its prompt, past = P / 2   (a chunk with a past)
 *               B, C as above
 * </pre>
 *
 * It writes blocks {@code [0, 3n)} of the pool, which must not hold anything yet (run it before
 * the engine starts): what it leaves there is garbage that no request reads, because a slot is
 * always written by its owner before it is read.
 */
public final class RunnerWarmup {

  /** Prompt length P at most: two runs of the attention kernel's 32 queries. */
  private static final int MAX_PROMPT = 64;

  private RunnerWarmup() {}

  /** Steps run and the time they took. */
  public record Result(int steps, Duration took) {}

  /**
   * Runs steps until {@code budget} has passed or {@code maxSteps} are done; none when the pool
   * is too small to hold three short sequences.
   */
  public static Result run(ModelRunner runner, Duration budget, int maxSteps) {
    int b = runner.blockSize();
    int prompt = Math.min(MAX_PROMPT, Math.min(runner.config().nPositions() / 2,
        runner.numBlocks() / 3 * b));
    if (prompt < 4) {
      return new Result(0, Duration.ZERO);
    }
    int n = (prompt + b - 1) / b;
    int[][] tables = new int[3][n];
    for (int s = 0; s < 3; s++) {
      for (int k = 0; k < n; k++) {
        tables[s][k] = s * n + k;
      }
    }
    int vocab = runner.config().vocabSize();
    long start = System.nanoTime();
    long deadline = start + budget.toNanos();
    int steps = 0;
    while (steps < maxSteps && System.nanoTime() < deadline) {
      int from = steps % 2 == 0 ? 0 : prompt / 2;
      runner.forward(new ForwardBatch(List.of(
          new ForwardBatch.Seq(tokens(prompt - from, steps, vocab), from, tables[0]),
          new ForwardBatch.Seq(tokens(1, steps + 1, vocab), prompt - 1, tables[1]),
          new ForwardBatch.Seq(tokens(1, steps + 2, vocab), prompt / 2 - 1, tables[2]))));
      steps++;
    }
    return new Result(steps, Duration.ofNanos(System.nanoTime() - start));
  }

  /**
   * Scratch tokens among the first {@value #SCRATCH_VOCAB} ids: the JIT warms up on any ids,
   * and a memory-mapped embedding table ({@code WeightsFile}) then has only those rows made
   * resident, not pages all over the vocabulary.
   */
  private static final int SCRATCH_VOCAB = 256;

  private static int[] tokens(int count, int seed, int vocab) {
    int ids = Math.min(vocab, SCRATCH_VOCAB);
    int[] t = new int[count];
    for (int i = 0; i < count; i++) {
      t[i] = (int) ((seed * 7919L + i * 104729L) % ids);
    }
    return t;
  }
}
