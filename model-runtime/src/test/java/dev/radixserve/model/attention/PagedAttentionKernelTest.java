package dev.radixserve.model.attention;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.concurrent.ForkJoinPool;
import java.util.stream.IntStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

/** The CPU paged attention against a naive float64 attention, and what it may write. */
class PagedAttentionKernelTest {

  /** {past, new tokens, share full past blocks with sequence i (-1: none)}. */
  static final int[][] MIXED = {
      {0, 37, -1},   // prefill from scratch, partial last block
      {50, 1, -1},   // decode
      {40, 20, 1},   // prefill chunk over blocks shared with sequence 1
      {16, 21, -1},  // chunk after a full block
      {70, 1, 1},    // decode over blocks shared with sequence 1
      {0, 1, -1},    // a one-token prompt
  };

  /** Every pool slot, then every slot again for values: a copy of the caches' contents. */
  static float[] floats(java.lang.foreign.MemorySegment m) {
    return m.toArray(ValueLayout.JAVA_FLOAT);
  }

  static List<Arguments> variants() {
    List<RowAttention> maths = RowAttention.VectorSupport.AVAILABLE
        ? List.of(new ScalarRowAttention(), RowAttention.VectorSupport.create())
        : List.of(new ScalarRowAttention());
    List<Arguments> out = new java.util.ArrayList<>();
    for (RowAttention math : maths) {
      for (int block : new int[] {16, 32}) {
        out.add(Arguments.of(math, block, 4, 64)); // GPT-2's head: 8 AVX2 vectors
        out.add(Arguments.of(math, block, 4, 32)); // 4 vectors
        out.add(Arguments.of(math, block, 2, 40)); // grouped-query heads, head size with a tail
        out.add(Arguments.of(math, block, 2, 128)); // Llama's head: 2 chunks of 8 AVX2 vectors
        out.add(Arguments.of(math, block, 4, 68)); // a chunk of 8 vectors and a tail
      }
    }
    return out;
  }

  /** Runs items on a real pool of threads, as ONNX Runtime's ParallelFor does. */
  private static final PagedAttentionKernel.Parallel THREADS = (items, item) ->
      ForkJoinPool.commonPool().submit(() -> IntStream.range(0, items).parallel().forEach(item))
          .join();

  @ParameterizedTest(name = "{0} B={1} kvHeads={2} D={3}")
  @MethodSource("variants")
  void matchesNaiveAttentionAndWritesOnlyTheNewSlots(RowAttention math, int block, int kvHeads,
      int headSize) {
    try (Arena arena = Arena.ofShared()) {
      AttentionCase c = new AttentionCase(arena, block * 31L + headSize, 4, kvHeads, headSize,
          block, 48, MIXED);
      float[] keysBefore = floats(c.keyCache);
      float[] valuesBefore = floats(c.valueCache);
      double[][] expected = c.expected(keysBefore, valuesBefore);
      new PagedAttentionKernel(4, kvHeads, headSize, 0f, math).run(c.step(), THREADS);
      double error = c.maxError(expected);
      assertTrue(error < 1e-4, "max error " + error);
      assertOnlyNewSlotsChanged(c, keysBefore, floats(c.keyCache), c.key);
      assertOnlyNewSlotsChanged(c, valuesBefore, floats(c.valueCache), c.value);
    }
  }

  /**
   * A token attended as the one query of a decode step (every head in one item, the pool read
   * slot by slot) gives the same bits as the same token inside a prefill run (one head per item):
   * a prefix-cache hit that leaves one prompt token to compute must not change the logits.
   */
  /**
   * {window, softcap} pairs (0: none): a window inside one block, one crossing block boundaries,
   * one longer than some contexts and shorter than others, a window of one position, a soft cap
   * alone and with a window.
   */
  static final float[][] RULES = {{5, 0}, {20, 0}, {37, 0}, {1, 0}, {0, 5}, {20, 5}, {9, 0.5f}};

  static ScoreRule rule(float[] windowAndCap) {
    int window = (int) windowAndCap[0];
    return new ScoreRule(window == 0 ? ScoreRule.UNBOUNDED : window, windowAndCap[1]);
  }

  static List<Arguments> windowedVariants() {
    List<Arguments> out = new java.util.ArrayList<>();
    for (Arguments v : variants()) {
      for (float[] r : RULES) {
        Object[] a = v.get();
        out.add(Arguments.of(a[0], a[1], a[2], a[3], (int) r[0], r[1]));
      }
    }
    return out;
  }

  /**
   * Sliding windows and soft caps against the float64 reference, over MIXED's chunked prefills
   * after a past (each query of a chunk its own window), decodes, shared blocks and GQA; and a
   * windowed query reads no position before its window: every pool slot no query's window covers
   * is NaN, which would poison any output that read it.
   */
  @ParameterizedTest(name = "{0} B={1} kvHeads={2} D={3} window={4} softcap={5}")
  @MethodSource("windowedVariants")
  void windowsAndSoftcapsMatchNaiveAttentionAndReadOnlyTheirWindows(RowAttention math, int block,
      int kvHeads, int headSize, int window, float softcap) {
    try (Arena arena = Arena.ofShared()) {
      AttentionCase c = new AttentionCase(arena, block * 13L + headSize + window, 4, kvHeads,
          headSize, block, 48, MIXED);
      ScoreRule rule = rule(new float[] {window, softcap});
      poisonOutsideWindows(c, rule);
      float[] keysBefore = floats(c.keyCache);
      float[] valuesBefore = floats(c.valueCache);
      double[][] expected = c.expected(keysBefore, valuesBefore, window, softcap);
      new PagedAttentionKernel(4, kvHeads, headSize, 0f, rule, math).run(c.step(), THREADS);
      double error = c.maxError(expected);
      assertTrue(error < 1e-4, "max error " + error);
      assertOnlyNewSlotsChanged(c, keysBefore, floats(c.keyCache), c.key);
      assertOnlyNewSlotsChanged(c, valuesBefore, floats(c.valueCache), c.value);
    }
  }

  /** NaN in every pool slot that no query of the step may read under {@code rule}. */
  static void poisonOutsideWindows(AttentionCase c, ScoreRule rule) {
    java.util.BitSet readable = new java.util.BitSet();
    for (int s = 0; s < c.past.length; s++) {
      // the first new token's window starts earliest; the new tokens' own slots are written first
      for (int p = rule.from(c.past[s] + 1); p < c.past[s] + c.fresh[s]; p++) {
        readable.set((int) c.slot(s, p));
      }
    }
    long kvRow = (long) c.kvHeads * c.headSize;
    for (long slot = 0; slot < (long) c.numBlocks * c.blockSize; slot++) {
      if (!readable.get((int) slot)) {
        for (long i = 0; i < kvRow; i++) {
          c.keyCache.setAtIndex(ValueLayout.JAVA_FLOAT, slot * kvRow + i, Float.NaN);
          c.valueCache.setAtIndex(ValueLayout.JAVA_FLOAT, slot * kvRow + i, Float.NaN);
        }
      }
    }
  }

  /**
   * A window as long as every context, or longer, is full attention: the same bits, not merely
   * close ones (a layer must not change its output because its window could have mattered).
   */
  @ParameterizedTest(name = "{0} B={1} kvHeads={2} D={3}")
  @MethodSource("variants")
  void aWindowCoveringTheContextIsFullAttentionBitForBit(RowAttention math, int block,
      int kvHeads, int headSize) {
    int[] full = outputBits(math, block, kvHeads, headSize, ScoreRule.FULL);
    int longest = 71; // MIXED's longest sequence: 70 past + 1 new
    assertArrayEquals(full, outputBits(math, block, kvHeads, headSize,
        new ScoreRule(longest, 0f)));
    assertArrayEquals(full, outputBits(math, block, kvHeads, headSize,
        new ScoreRule(4096, 0f)));
  }

  private static int[] outputBits(RowAttention math, int block, int kvHeads, int headSize,
      ScoreRule rule) {
    try (Arena arena = Arena.ofShared()) {
      AttentionCase c = new AttentionCase(arena, block * 5L + headSize, 4, kvHeads, headSize,
          block, 48, MIXED);
      new PagedAttentionKernel(4, kvHeads, headSize, 0f, rule, math).run(c.step(), THREADS);
      return c.output.toArray(ValueLayout.JAVA_INT);
    }
  }

  @Test
  void attributesWithoutAMeaningAreRefused() {
    assertEquals(ScoreRule.FULL, ScoreRule.fromAttributes(-1, 0f));
    assertEquals(new ScoreRule(4096, 50f), ScoreRule.fromAttributes(4096, 50f));
    assertEquals("local_window_size must be -1 (none) or in [1, 2147483647], got 0",
        assertThrows(IllegalArgumentException.class, () -> ScoreRule.fromAttributes(0, 0f))
            .getMessage());
    assertThrows(IllegalArgumentException.class, () -> ScoreRule.fromAttributes(-2, 0f));
    assertEquals("softcap must be finite and >= 0, got -1.0",
        assertThrows(IllegalArgumentException.class, () -> ScoreRule.fromAttributes(-1, -1f))
            .getMessage());
    assertThrows(IllegalArgumentException.class,
        () -> ScoreRule.fromAttributes(-1, Float.NaN));
  }

  @ParameterizedTest(name = "{0} B={1} kvHeads={2} D={3}")
  @MethodSource("variants")
  void aDecodeStepGivesThePrefillRunsBits(RowAttention math, int block, int kvHeads,
      int headSize) {
    // full attention; a window that starts inside a block, with a soft cap
    for (ScoreRule rule : List.of(ScoreRule.FULL, new ScoreRule(block + 5, 4f))) {
      decodeGivesThePrefillRunsBits(math, block, kvHeads, headSize, rule);
    }
  }

  private static void decodeGivesThePrefillRunsBits(RowAttention math, int block, int kvHeads,
      int headSize, ScoreRule rule) {
    try (Arena arena = Arena.ofShared()) {
      int past = 3 * block + 5;
      int fresh = 16;
      AttentionCase c = new AttentionCase(arena, block * 7L + headSize, 4, kvHeads, headSize,
          block, 16, new int[][] {{past, fresh, -1}});
      PagedAttentionKernel kernel = new PagedAttentionKernel(4, kvHeads, headSize, 0f, rule,
          math);
      kernel.run(c.step(), THREADS);
      long row = 4L * headSize * Float.BYTES;
      long kvRow = (long) kvHeads * headSize * Float.BYTES;
      MemorySegment decoded = arena.allocate(row);
      // the run's last token again, alone: its past (the run's other tokens) is in the pool now
      PagedAttentionStep one = new PagedAttentionStep(c.query.asSlice((fresh - 1) * row, row),
          c.key.asSlice((fresh - 1) * kvRow, kvRow), c.value.asSlice((fresh - 1) * kvRow, kvRow),
          c.keyCache, c.valueCache, decoded, 1, c.numBlocks, block, headSize, new int[] {0, 1},
          new int[] {past + fresh - 1}, c.tables.clone(), c.maxBlocks);
      kernel.run(one, THREADS);
      assertArrayEquals(c.output.asSlice((fresh - 1) * row, row).toArray(ValueLayout.JAVA_INT),
          decoded.toArray(ValueLayout.JAVA_INT), rule.toString());
    }
  }

  /** Every pool float is unchanged except the new tokens' slots, which hold the new rows. */
  static void assertOnlyNewSlotsChanged(AttentionCase c, float[] before, float[] after,
      java.lang.foreign.MemorySegment rows) {
    int kvRow = c.kvHeads * c.headSize;
    float[] expected = before.clone();
    for (int s = 0; s < c.past.length; s++) {
      for (int t = c.cu[s]; t < c.cu[s + 1]; t++) {
        long slot = c.slot(s, c.past[s] + t - c.cu[s]);
        for (int i = 0; i < kvRow; i++) {
          expected[(int) (slot * kvRow + i)] =
              rows.getAtIndex(ValueLayout.JAVA_FLOAT, (long) t * kvRow + i);
        }
      }
    }
    assertArrayEquals(expected, after);
  }

  @Test
  void badStepsFailWithTheirNumbersAndWriteNothing() {
    try (Arena arena = Arena.ofShared()) {
      PagedAttentionKernel kernel = new PagedAttentionKernel(4, 4, 64, 0f,
          new ScalarRowAttention());
      AttentionCase c = new AttentionCase(arena, 5, 4, 4, 64, 16, 48, MIXED);
      float[] before = floats(c.keyCache);
      PagedAttentionStep ok = c.step();

      int[] badId = ok.blockTables().clone();
      badId[1 * c.maxBlocks + 2] = 48;
      assertEquals("sequence 1: block id 48 at table index 2 outside [0, 48)", fails(kernel,
          with(ok, ok.cuSeqlens(), ok.pastLens(), badId)));

      int[] longPast = ok.pastLens().clone();
      longPast[1] = c.maxBlocks * 16;
      assertEquals("sequence 1: past length " + longPast[1] + " + 1 new tokens exceed its block"
          + " table (" + c.maxBlocks + " blocks of 16 tokens)", fails(kernel,
          with(ok, ok.cuSeqlens(), longPast, ok.blockTables())));

      int[] negative = ok.pastLens().clone();
      negative[0] = -1;
      assertEquals("sequence 0: past length -1 < 0", fails(kernel,
          with(ok, ok.cuSeqlens(), negative, ok.blockTables())));

      int[] shortCu = ok.cuSeqlens().clone();
      shortCu[shortCu.length - 1] -= 1;
      assertEquals("cumulative_sequence_length must run from 0 to " + c.tokens + " tokens, got 0"
          + " .. " + (c.tokens - 1), fails(kernel,
          with(ok, shortCu, ok.pastLens(), ok.blockTables())));

      // sequence 4 decodes into a block sequence 1 reads as its past
      int[] clash = ok.blockTables().clone();
      clash[4 * c.maxBlocks + 70 / 16] = clash[1 * c.maxBlocks + 1];
      String message = fails(kernel, with(ok, ok.cuSeqlens(), ok.pastLens(), clash));
      assertTrue(message.contains("is written in this step"), message);

      assertArrayEquals(before, floats(c.keyCache), "a refused step wrote the pool");
      kernel.run(ok, PagedAttentionKernel.Parallel.SERIAL); // and the kernel still works
    }
  }

  private static PagedAttentionStep with(PagedAttentionStep s, int[] cu, int[] past,
      int[] tables) {
    return new PagedAttentionStep(s.query(), s.key(), s.value(), s.keyCache(), s.valueCache(),
        s.output(), s.tokens(), s.numBlocks(), s.blockSize(), s.headSize(), cu, past, tables,
        s.maxBlocks());
  }

  private static String fails(PagedAttentionKernel kernel, PagedAttentionStep step) {
    return assertThrows(IllegalArgumentException.class,
        () -> kernel.run(step, PagedAttentionKernel.Parallel.SERIAL)).getMessage();
  }
}
