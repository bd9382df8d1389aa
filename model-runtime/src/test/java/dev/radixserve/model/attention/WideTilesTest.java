package dev.radixserve.model.attention;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.radixserve.model.graph.KvDtype;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.zip.CRC32;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.provider.Arguments;

/**
 * The 512-bit tiles ({@link WideTiles}) give the 256-bit tiles' bits, so that a KV block, a
 * logprob or a greedy answer does not depend on whether the CPU has AVX-512 (and the disk tier's
 * blocks stay valid across hosts). The tile width is fixed per JVM, so each width runs in a child
 * JVM ({@code -Dradixserve.attention.tileBits}); each child runs {@link TiledBitsTest}'s checks
 * (every token of a prefill run has its decode step's bits; a grouped decode step has the
 * slot-by-slot loop's) on every KV dtype, head size and score rule there, and prints a digest of
 * the outputs of prefill runs (multi-query tiles, heads of 64 and 128, the pairs and their tails)
 * and of grouped decode steps. Without AVX-512 the Vector API emulates 512-bit vectors: slowly,
 * with the same arithmetic.
 */
class WideTilesTest {

  /** Run by the child JVM. */
  public static void main(String[] args) {
    TiledBitsTest checks = new TiledBitsTest();
    for (Arguments a : TiledBitsTest.variants()) {
      Object[] v = a.get();
      checks.everyTokenOfAPrefillRunHasItsDecodeStepsBits((KvDtype) v[0], (int) v[1],
          (ScoreRule) v[2]);
    }
    for (Arguments a : TiledBitsTest.groupedVariants()) {
      Object[] v = a.get();
      checks.aGroupedDecodeStepHasTheSlotBySlotBits((KvDtype) v[0], (int) v[1],
          (ScoreRule) v[2]);
    }
    CRC32 digest = new CRC32();
    for (Arguments a : TiledBitsTest.variants()) {
      Object[] v = a.get();
      digest.update(outputs((KvDtype) v[0], (int) v[1], (ScoreRule) v[2]));
    }
    System.out.println("tiles " + (WideTiles.ON ? 512 : 256) + " digest " + digest.getValue());
  }

  /**
   * The output bytes of one step of three sequences: a prefill run after a cached past, one of
   * odd length from position 0, and a decode step (grouped, for the grouped heads).
   */
  private static byte[] outputs(KvDtype kv, int headSize, ScoreRule rule) {
    int heads = 8;
    int kvHeads = 2;
    int block = 16;
    try (Arena arena = Arena.ofShared()) {
      AttentionCase c = new AttentionCase(arena, 29L * headSize + kv.ordinal(), heads, kvHeads,
          headSize, block, 40, new int[][] {{3 * block + 5, 2 * PagedAttentionKernel.QUERY_RUN
              + 7, -1}, {0, 37, -1}, {5 * block + 11, 1, -1}});
      int rows = c.numBlocks * block * kvHeads;
      MemorySegment keyCache = KvDtypeKernelTest.encode(arena, c.keyCache, kv, rows, headSize);
      MemorySegment valueCache =
          KvDtypeKernelTest.encode(arena, c.valueCache, kv, rows, headSize);
      new PagedAttentionKernel(heads, kvHeads, headSize, 0f, rule,
          RowAttention.VectorSupport.create(kv), kv)
          .run(KvDtypeKernelTest.step(c, keyCache, valueCache),
              PagedAttentionKernel.Parallel.SERIAL);
      long bytes = (long) c.tokens * heads * headSize * Float.BYTES;
      return c.output.asSlice(0, bytes).toArray(ValueLayout.JAVA_BYTE);
    }
  }

  @Test
  void wideTilesGiveTheNarrowTilesBits() throws Exception {
    String narrow = ChildJvm.line(WideTilesTest.class, "tiles ",
        "-D" + WideTiles.BITS_PROPERTY + "=256");
    String wide = ChildJvm.line(WideTilesTest.class, "tiles ",
        "-D" + WideTiles.BITS_PROPERTY + "=512");
    assertEquals("256", narrow.split(" ")[0], narrow);
    assertEquals("512", wide.split(" ")[0], wide);
    assertEquals(narrow.split(" ")[2], wide.split(" ")[2], "512-bit tiles changed the bits");
  }
}
