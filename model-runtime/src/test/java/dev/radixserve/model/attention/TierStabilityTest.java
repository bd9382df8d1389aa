package dev.radixserve.model.attention;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.radixserve.model.graph.KvDtype;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * The Vector API kernel gives the same bits interpreted (a child JVM with {@code -Xint}) as after
 * C2 has compiled it here. Before {@link StableLanes}, C2's unordered lane sums and SVML exp made
 * a warm server's logits differ from a cold one's in the last bit. Over every KV cache dtype.
 */
class TierStabilityTest {

  private static final int[][] SHAPES = PagedAttentionKernelTest.MIXED;
  private static final int[][] SMALL = {{21, 5, -1}, {40, 1, -1}};

  /**
   * The bits of one step's output and caches, on a fixed random case: full attention, and a
   * sliding window with a soft cap (its tanh must be as stable as the exp).
   */
  static String fingerprint(int runs) {
    StringBuilder all = new StringBuilder(fingerprint(runs, ScoreRule.FULL, KvDtype.FLOAT32)
        + " " + fingerprint(runs, new ScoreRule(20, 5f), KvDtype.FLOAT32));
    // each narrow cache type: its conversions on load must be as stable as the sums (a smaller
    // step, a prefill run and a decode: the interpreted Vector API is slow)
    for (KvDtype kv : KvDtypeKernelTest.NARROW) {
      all.append(' ').append(fingerprint(Math.max(1, runs / 4), ScoreRule.FULL, kv, SMALL));
    }
    return all.toString();
  }

  private static String fingerprint(int runs, ScoreRule rule, KvDtype kv) {
    return fingerprint(runs, rule, kv, SHAPES);
  }

  private static String fingerprint(int runs, ScoreRule rule, KvDtype kv, int[][] shapes) {
    try (Arena arena = Arena.ofShared()) {
      AttentionCase c = new AttentionCase(arena, 42, 4, 2, 64, 16, 48, shapes);
      int rows = c.numBlocks * c.blockSize * c.kvHeads;
      MemorySegment keys = kv == KvDtype.FLOAT32 ? c.keyCache
          : KvDtypeKernelTest.encode(arena, c.keyCache, kv, rows, c.headSize);
      MemorySegment values = kv == KvDtype.FLOAT32 ? c.valueCache
          : KvDtypeKernelTest.encode(arena, c.valueCache, kv, rows, c.headSize);
      PagedAttentionKernel kernel = new PagedAttentionKernel(4, 2, 64, 0f, rule,
          RowAttention.VectorSupport.create(kv), kv);
      for (int i = 0; i < runs; i++) {
        // same step: same result
        kernel.run(new PagedAttentionStep(c.query, c.key, c.value, keys, values, c.output,
            c.tokens, c.numBlocks, c.blockSize, c.headSize, c.cu.clone(), c.past.clone(),
            c.tables.clone(), c.maxBlocks), PagedAttentionKernel.Parallel.SERIAL);
      }
      return Arrays.hashCode(c.output.toArray(ValueLayout.JAVA_INT)) + " "
          + Arrays.hashCode(keys.toArray(ValueLayout.JAVA_BYTE)) + " "
          + Arrays.hashCode(values.toArray(ValueLayout.JAVA_BYTE));
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
