package dev.radixserve.model.attention;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.model.graph.KvDtype;
import java.lang.foreign.Arena;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The Vector API kernel at both vector widths it takes (256 bits on AVX2 and AVX-512, 128 on
 * NEON and SSE), whatever this CPU is: the width is fixed per JVM (a static final species, so
 * that C2 folds it), so each width runs in a child JVM with
 * {@code -Dradixserve.attention.vectorBits}. The 128-bit path had no test on x86 before. Each
 * narrow KV cache type too: its vector loads (4 lanes read 4 bytes of an int8 row, not 8) and
 * the kernel over it.
 */
class VectorWidthTest {

  /**
   * 8 vectors of 128 or 256 bits (the unrolled path), 4, a head with a scalar tail, a
   * Llama-sized head (whole chunks of 8 vectors) and one with a chunk, vectors and a tail left.
   */
  private static final int[] HEAD_SIZES = {64, 32, 40, 128, 68};

  /**
   * Run by the child JVM: the kernel against the naive attention for every head size, with full
   * attention and with a window crossing blocks and a soft cap.
   */
  public static void main(String[] args) {
    double worst = 0;
    for (int headSize : HEAD_SIZES) {
      for (float[] r : new float[][] {{0, 0}, {20, 5}}) {
        try (Arena arena = Arena.ofShared()) {
          AttentionCase c = new AttentionCase(arena, 17L + headSize, 4, 2, headSize, 16, 48,
              PagedAttentionKernelTest.MIXED);
          double[][] expected = c.expected(PagedAttentionKernelTest.floats(c.keyCache),
              PagedAttentionKernelTest.floats(c.valueCache), (int) r[0], r[1]);
          new PagedAttentionKernel(4, 2, headSize, 0f, PagedAttentionKernelTest.rule(r),
              RowAttention.VectorSupport.create())
              .run(c.step(), PagedAttentionKernel.Parallel.SERIAL);
          worst = Math.max(worst, c.maxError(expected));
        }
      }
    }
    // every narrow cache type: its loads (and the last row of a pool) and the kernel on them
    for (KvDtype kv : KvDtypeKernelTest.NARROW) {
      KvDtypeKernelTest.assertLoadsMatchDecodes(kv);
      for (int headSize : HEAD_SIZES) {
        for (float[] r : new float[][] {{0, 0}, {20, 5}}) {
          worst = Math.max(worst, KvDtypeKernelTest.errorOnHeldValues(kv,
              RowAttention.VectorSupport.create(kv), 2, headSize,
              PagedAttentionKernelTest.rule(r), (int) r[0], r[1]));
        }
      }
    }
    System.out.println("bits " + VectorRowAttention.vectorBits() + " error " + worst);
  }

  @ParameterizedTest(name = "{0} bits")
  @ValueSource(ints = {128, 256})
  void matchesNaiveAttentionAtEveryWidth(int bits) throws Exception {
    String out = ChildJvm.line(VectorWidthTest.class, "bits ",
        "-D" + VectorRowAttention.BITS_PROPERTY + "=" + bits);
    String[] line = out.split(" ");
    assertEquals(bits, Integer.parseInt(line[0]), out);
    assertTrue(Double.parseDouble(line[2]) < 1e-4, out);
  }
}
