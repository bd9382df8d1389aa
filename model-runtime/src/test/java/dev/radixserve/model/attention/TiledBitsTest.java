package dev.radixserve.model.attention;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.radixserve.model.graph.KvDtype;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The tiled prefill loops ({@link TiledScores}, {@link TiledValues}) give every token of a run
 * the bits a decode step gives it ({@code attendOneQuery}, per-pair loops), whatever the run's
 * length and wherever a chunked prefill splits it: the invariant cache on ≡ off rests on. Every
 * KV dtype; Llama's heads of 128 (16 vectors) and 64 (8: the dot8 chains, which start with a
 * product), 96 (tiled scores, per-row values); 8 query heads over 2 kv heads; full attention and
 * a window starting inside a block with a soft cap; runs of odd lengths that end inside a block.
 */
class TiledBitsTest {

  static List<Arguments> variants() {
    List<Arguments> out = new ArrayList<>();
    for (KvDtype kv : KvDtype.values()) {
      for (int headSize : new int[] {128, 64, 96}) {
        for (ScoreRule rule : List.of(ScoreRule.FULL, new ScoreRule(16 + 5, 4f),
            new ScoreRule(3, 0f))) {
          out.add(Arguments.of(kv, headSize, rule));
        }
      }
    }
    return out;
  }

  @ParameterizedTest(name = "{0} D={1} {2}")
  @MethodSource("variants")
  void everyTokenOfAPrefillRunHasItsDecodeStepsBits(KvDtype kv, int headSize, ScoreRule rule) {
    assumeTrue(RowAttention.VectorSupport.AVAILABLE);
    int heads = 8;
    int kvHeads = 2;
    int block = 16;
    int past = 3 * block + 5;
    int fresh = 2 * PagedAttentionKernel.QUERY_RUN + 7; // two whole runs and an odd one
    try (Arena arena = Arena.ofShared()) {
      AttentionCase c = new AttentionCase(arena, 41L * headSize + kv.ordinal(), heads, kvHeads,
          headSize, block, 16, new int[][] {{past, fresh, -1}});
      int rows = c.numBlocks * block * kvHeads;
      MemorySegment keyCache = KvDtypeKernelTest.encode(arena, c.keyCache, kv, rows, headSize);
      MemorySegment valueCache =
          KvDtypeKernelTest.encode(arena, c.valueCache, kv, rows, headSize);
      PagedAttentionKernel kernel = new PagedAttentionKernel(heads, kvHeads, headSize, 0f, rule,
          RowAttention.VectorSupport.create(kv), kv);
      kernel.run(KvDtypeKernelTest.step(c, keyCache, valueCache),
          PagedAttentionKernel.Parallel.SERIAL);
      long row = (long) heads * headSize * Float.BYTES;
      long kvRow = (long) kvHeads * headSize * Float.BYTES;
      MemorySegment decoded = arena.allocate(row);
      for (int t = 0; t < fresh; t++) {
        // token t alone; the pool holds every token of the run by now, and it sees [.., past + t]
        PagedAttentionStep one = new PagedAttentionStep(c.query.asSlice(t * row, row),
            c.key.asSlice(t * kvRow, kvRow), c.value.asSlice(t * kvRow, kvRow), keyCache,
            valueCache, decoded, 1, c.numBlocks, block, headSize, new int[] {0, 1},
            new int[] {past + t}, c.tables.clone(), c.maxBlocks);
        kernel.run(one, PagedAttentionKernel.Parallel.SERIAL);
        assertArrayEquals(c.output.asSlice(t * row, row).toArray(ValueLayout.JAVA_INT),
            decoded.toArray(ValueLayout.JAVA_INT), "token " + t + " of " + fresh);
      }
    }
  }

  /**
   * A decode step of several sequences through the grouped tiles ({@code attendDecodes}: the
   * heads of a kv group as a tile's rows) gives the slot-by-slot loop's bits: groups of 4 heads
   * (pairs only) and of 3 (a pair and a row alone), sequences sharing prefix blocks, contexts
   * that end inside a block, windows and soft caps.
   */
  /** {@link #variants} with heads of whole 8-vector chunks, the grouped tiles' heads. */
  static List<Arguments> groupedVariants() {
    return variants().stream().filter(a -> TiledValues.fits((int) a.get()[1])).toList();
  }

  @ParameterizedTest(name = "{0} D={1} {2}")
  @MethodSource("groupedVariants")
  void aGroupedDecodeStepHasTheSlotBySlotBits(KvDtype kv, int headSize, ScoreRule rule) {
    assumeTrue(RowAttention.VectorSupport.AVAILABLE);
    for (int[] shape : new int[][] {{8, 2}, {6, 2}, {12, 4}}) {
      int heads = shape[0];
      int kvHeads = shape[1];
      int block = 16;
      try (Arena arena = Arena.ofShared()) {
        AttentionCase c = new AttentionCase(arena, 97L * headSize + heads + kv.ordinal(), heads,
            kvHeads, headSize, block, 40, new int[][] {{3 * block + 5, 1, -1},
                {2 * block, 1, 0}, {block - 3, 1, -1}, {5 * block + 11, 1, 0}});
        int rows = c.numBlocks * block * kvHeads;
        long bytes = (long) c.tokens * heads * headSize * Float.BYTES;
        int[] expected = null;
        for (boolean grouped : new boolean[] {false, true}) {
          MemorySegment keyCache = KvDtypeKernelTest.encode(arena, c.keyCache, kv, rows,
              headSize);
          MemorySegment valueCache =
              KvDtypeKernelTest.encode(arena, c.valueCache, kv, rows, headSize);
          PagedAttentionKernel kernel = new PagedAttentionKernel(heads, kvHeads, headSize, 0f,
              rule, new VectorRowAttention(kv, grouped), kv);
          kernel.run(KvDtypeKernelTest.step(c, keyCache, valueCache),
              PagedAttentionKernel.Parallel.SERIAL);
          int[] bits = c.output.asSlice(0, bytes).toArray(ValueLayout.JAVA_INT);
          if (expected == null) {
            expected = bits;
          } else {
            assertArrayEquals(expected, bits, heads + " heads over " + kvHeads);
          }
        }
      }
    }
  }
}
