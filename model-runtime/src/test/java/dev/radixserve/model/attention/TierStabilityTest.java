package dev.radixserve.model.attention;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.foreign.Arena;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * The Vector API kernel gives the same bits interpreted (a child JVM with {@code -Xint}) as after
 * C2 has compiled it here. Before {@link StableLanes}, C2's unordered lane sums and SVML exp made
 * a warm server's logits differ from a cold one's in the last bit.
 */
class TierStabilityTest {

  private static final int[][] SHAPES = PagedAttentionKernelTest.MIXED;

  /**
   * The bits of one step's output and caches, on a fixed random case: full attention, and a
   * sliding window with a soft cap (its tanh must be as stable as the exp).
   */
  static String fingerprint(int runs) {
    return fingerprint(runs, ScoreRule.FULL) + " " + fingerprint(runs, new ScoreRule(20, 5f));
  }

  private static String fingerprint(int runs, ScoreRule rule) {
    try (Arena arena = Arena.ofShared()) {
      AttentionCase c = new AttentionCase(arena, 42, 4, 2, 64, 16, 48, SHAPES);
      PagedAttentionKernel kernel = new PagedAttentionKernel(4, 2, 64, 0f, rule,
          RowAttention.VectorSupport.create());
      for (int i = 0; i < runs; i++) {
        kernel.run(c.step(), PagedAttentionKernel.Parallel.SERIAL); // same step: same result
      }
      return Arrays.hashCode(c.output.toArray(ValueLayout.JAVA_INT)) + " "
          + Arrays.hashCode(c.keyCache.toArray(ValueLayout.JAVA_INT)) + " "
          + Arrays.hashCode(c.valueCache.toArray(ValueLayout.JAVA_INT));
    }
  }

  /** Run by the child JVM: one cold step. */
  public static void main(String[] args) {
    System.out.println("fingerprint " + fingerprint(1));
  }

  @Test
  void interpretedAndCompiledKernelsAgreeBitForBit() throws Exception {
    String compiled = fingerprint(1000); // compiled by C2 long before the last run
    assertEquals(compiled, interpreted());
  }

  private static String interpreted() throws Exception {
    return ChildJvm.line(TierStabilityTest.class, "fingerprint ", "-Xint");
  }
}
