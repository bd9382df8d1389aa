package dev.radixserve.model.attention;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.radixserve.model.graph.KvDtype;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ForkJoinPool;
import java.util.stream.IntStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The CPU kernel over caches of each {@link KvDtype}: against the float64 attention computed on
 * the values the cache really holds (the rounded or quantized K/V, decoded), so the tolerance is
 * the fp32 kernel's own (1e-4), not the format's; the format's rounding is {@code KvDtypeTest}'s.
 */
class KvDtypeKernelTest {

  static final List<KvDtype> NARROW =
      List.of(KvDtype.BFLOAT16, KvDtype.FLOAT16, KvDtype.INT8, KvDtype.FP8);

  private static final PagedAttentionKernel.Parallel THREADS = (items, item) ->
      ForkJoinPool.commonPool().submit(() -> IntStream.range(0, items).parallel().forEach(item))
          .join();

  static List<Arguments> variants() {
    List<Arguments> out = new ArrayList<>();
    for (KvDtype kv : NARROW) {
      List<RowAttention> maths = RowAttention.VectorSupport.AVAILABLE
          ? List.of(new ScalarRowAttention(kv), RowAttention.VectorSupport.create(kv))
          : List.of(new ScalarRowAttention(kv));
      for (RowAttention math : maths) {
        out.add(Arguments.of(kv, math, 4, 64)); // 8 AVX2 vectors
        out.add(Arguments.of(kv, math, 2, 40)); // grouped-query, a scalar tail
        out.add(Arguments.of(kv, math, 1, 64)); // grouped-query (4 heads, 1 kv head), 8 vectors
        out.add(Arguments.of(kv, math, 2, 128)); // 2 chunks of 8 vectors
        out.add(Arguments.of(kv, math, 4, 68)); // a chunk and a tail
      }
    }
    return out;
  }

  /** The fp32 pool [blocks, B, kvHeads, D] of {@code c}, each head row encoded in {@code kv}. */
  static MemorySegment encode(Arena arena, MemorySegment fp32, KvDtype kv, int rows, int headSize) {
    MemorySegment out = arena.allocate(rows * kv.headRowBytes(headSize), 64);
    for (long r = 0; r < rows; r++) {
      kv.encodeRow(fp32, r * headSize * Float.BYTES, out, r * kv.headRowBytes(headSize), headSize);
    }
    return out;
  }

  /** The values an encoded pool holds, as floats in the fp32 layout. */
  static float[] decode(MemorySegment cache, KvDtype kv, int rows, int headSize) {
    float[] out = new float[rows * headSize];
    for (int r = 0; r < rows; r++) {
      for (int d = 0; d < headSize; d++) {
        out[r * headSize + d] = kv.decode(cache, r * kv.headRowBytes(headSize), d);
      }
    }
    return out;
  }

  /** {@code rows} fp32 rows replaced by what the cache would hold for them. */
  static void roundRows(Arena arena, MemorySegment rows, KvDtype kv, int count, int headSize) {
    float[] held = decode(encode(arena, rows, kv, count, headSize), kv, count, headSize);
    MemorySegment.copy(held, 0, rows, ValueLayout.JAVA_FLOAT, 0, held.length);
  }

  @ParameterizedTest(name = "{0} {1} kvHeads={2} D={3}")
  @MethodSource("variants")
  void matchesFloat64AttentionOnTheHeldValuesAndWritesOnlyTheNewSlots(KvDtype kv,
      RowAttention math, int kvHeads, int headSize) {
    int block = 16;
    try (Arena arena = Arena.ofShared()) {
      AttentionCase c = new AttentionCase(arena, 31L * headSize + kv.ordinal(), 4, kvHeads,
          headSize, block, 48, PagedAttentionKernelTest.MIXED);
      int rows = c.numBlocks * block * kvHeads;
      int newRows = c.tokens * kvHeads;
      MemorySegment keyCache = encode(arena, c.keyCache, kv, rows, headSize);
      MemorySegment valueCache = encode(arena, c.valueCache, kv, rows, headSize);
      byte[] keysBefore = keyCache.toArray(ValueLayout.JAVA_BYTE);
      // the reference sees what the caches hold: the pool's and the new rows' held values
      float[] heldKeys = decode(keyCache, kv, rows, headSize);
      float[] heldValues = decode(valueCache, kv, rows, headSize);
      MemorySegment newKeys = copy(arena, c.key);
      MemorySegment newValues = copy(arena, c.value);
      roundRows(arena, c.key, kv, newRows, headSize);
      roundRows(arena, c.value, kv, newRows, headSize);
      double[][] expected = c.expected(heldKeys, heldValues);
      MemorySegment.copy(newKeys, 0, c.key, 0, newKeys.byteSize());
      MemorySegment.copy(newValues, 0, c.value, 0, newValues.byteSize());

      new PagedAttentionKernel(4, kvHeads, headSize, 0f, ScoreRule.FULL, math, kv)
          .run(step(c, keyCache, valueCache), THREADS);

      double error = c.maxError(expected);
      assertTrue(error < 1e-4, kv + " max error " + error);
      // every byte as before but the new slots, which hold their rows encoded once
      byte[] expectedKeys = keysBefore.clone();
      long headRow = kv.headRowBytes(headSize);
      MemorySegment encoded = encode(arena, c.key, kv, newRows, headSize);
      for (int s = 0; s < c.past.length; s++) {
        for (int t = c.cu[s]; t < c.cu[s + 1]; t++) {
          long slot = c.slot(s, c.past[s] + t - c.cu[s]);
          MemorySegment.copy(encoded, ValueLayout.JAVA_BYTE, t * kvHeads * headRow, expectedKeys,
              (int) (slot * kvHeads * headRow), (int) (kvHeads * headRow));
        }
      }
      assertArrayEquals(expectedKeys, keyCache.toArray(ValueLayout.JAVA_BYTE));
    }
  }

  /**
   * A token alone (a decode step, or the one prompt token a prefix hit leaves) gives the bits it
   * gets inside a prefill run, over every cache type: what keeps cache on and off equal.
   */
  @ParameterizedTest(name = "{0} {1} kvHeads={2} D={3}")
  @MethodSource("variants")
  void aDecodeStepGivesThePrefillRunsBits(KvDtype kv, RowAttention math, int kvHeads,
      int headSize) {
    int block = 16;
    for (ScoreRule rule : List.of(ScoreRule.FULL, new ScoreRule(block + 5, 4f))) {
      try (Arena arena = Arena.ofShared()) {
        int past = 3 * block + 5;
        int fresh = 16;
        AttentionCase c = new AttentionCase(arena, block * 7L + headSize, 4, kvHeads, headSize,
            block, 16, new int[][] {{past, fresh, -1}});
        int rows = c.numBlocks * block * kvHeads;
        MemorySegment keyCache = encode(arena, c.keyCache, kv, rows, headSize);
        MemorySegment valueCache = encode(arena, c.valueCache, kv, rows, headSize);
        PagedAttentionKernel kernel = new PagedAttentionKernel(4, kvHeads, headSize, 0f, rule,
            math, kv);
        kernel.run(step(c, keyCache, valueCache), THREADS);
        long row = 4L * headSize * Float.BYTES;
        long kvRow = (long) kvHeads * headSize * Float.BYTES;
        MemorySegment decoded = arena.allocate(row);
        PagedAttentionStep one = new PagedAttentionStep(c.query.asSlice((fresh - 1) * row, row),
            c.key.asSlice((fresh - 1) * kvRow, kvRow), c.value.asSlice((fresh - 1) * kvRow, kvRow),
            keyCache, valueCache, decoded, 1, c.numBlocks, block, headSize, new int[] {0, 1},
            new int[] {past + fresh - 1}, c.tables.clone(), c.maxBlocks);
        kernel.run(one, THREADS);
        assertArrayEquals(c.output.asSlice((fresh - 1) * row, row).toArray(ValueLayout.JAVA_INT),
            decoded.toArray(ValueLayout.JAVA_INT), kv + " " + rule);
      }
    }
  }

  /**
   * The vector loads convert exactly as {@link KvDtype#decode} does: every bf16 and fp16 bit
   * pattern (normals, subnormals, zeros, infinities, NaNs), every int8 and fp8 code.
   */
  @ParameterizedTest
  @EnumSource(KvDtype.class)
  void vectorLoadsGiveTheScalarDecodesBits(KvDtype kv) {
    assumeTrue(RowAttention.VectorSupport.AVAILABLE);
    assertLoadsMatchDecodes(kv);
  }

  /** Throws unless every vector load of {@code kv} gives {@link KvDtype#decode}'s bits. */
  static void assertLoadsMatchDecodes(KvDtype kv) {
    VectorRowAttention.Rows rows = VectorRowAttention.Rows.of(kv);
    try (Arena arena = Arena.ofConfined()) {
      int values = kv == KvDtype.FLOAT32 ? 4096 : kv.headRowBytes(1) == 2 ? 65536 : 256;
      long rowBytes = kv.headRowBytes(values);
      MemorySegment row = arena.allocate(rowBytes);
      for (int i = 0; i < values; i++) {
        switch (kv) {
          case FLOAT32 -> row.setAtIndex(ValueLayout.JAVA_FLOAT, i,
              Float.intBitsToFloat(i * 1048573));
          case BFLOAT16, FLOAT16 -> row.setAtIndex(ValueLayout.JAVA_SHORT, i, (short) i);
          case INT8, FP8 -> row.set(ValueLayout.JAVA_BYTE, Float.BYTES + i, (byte) i);
        }
      }
      for (float scale : kv.scaled() ? new float[] {0.0123f, 3.5f} : new float[] {1f}) {
        if (kv.scaled()) {
          row.set(ValueLayout.JAVA_FLOAT_UNALIGNED, 0, scale);
        }
        int lanes = VectorRowAttention.Rows.lanes();
        MemorySegment converted = arena.allocate((long) lanes * Float.BYTES);
        for (int d = 0; d + lanes <= values; d += lanes) {
          rows.convert(row, 0, d, converted, 0);
          float[] got = converted.toArray(ValueLayout.JAVA_FLOAT);
          for (int l = 0; l < got.length; l++) {
            float want = kv.decode(row, 0, d + l);
            assertEquals(Float.floatToIntBits(want), Float.floatToIntBits(got[l]),
                kv + " value " + (d + l) + ": " + want + " vs " + got[l]);
            assertEquals(want, rows.get(row, 0, d + l));
          }
        }
      }
      // the pool's very last row: a narrow load must not read past it
      MemorySegment last = row.asSlice(rowBytes - kv.headRowBytes(8), kv.headRowBytes(8));
      rows.convert(last, 0, 8 - VectorRowAttention.Rows.lanes(),
          arena.allocate(8L * Float.BYTES), 0);
    }
  }

  /**
   * The kernel's largest error against float64 attention on the values {@code kv} caches hold,
   * over {@link PagedAttentionKernelTest#MIXED} with 4 query heads and a serial run.
   */
  static double errorOnHeldValues(KvDtype kv, RowAttention math, int kvHeads, int headSize,
      ScoreRule rule, int window, double softcap) {
    try (Arena arena = Arena.ofShared()) {
      AttentionCase c = new AttentionCase(arena, 17L * headSize + kv.ordinal(), 4, kvHeads,
          headSize, 16, 48, PagedAttentionKernelTest.MIXED);
      int rows = c.numBlocks * 16 * kvHeads;
      MemorySegment keyCache = encode(arena, c.keyCache, kv, rows, headSize);
      MemorySegment valueCache = encode(arena, c.valueCache, kv, rows, headSize);
      MemorySegment newKeys = copy(arena, c.key);
      MemorySegment newValues = copy(arena, c.value);
      roundRows(arena, c.key, kv, c.tokens * kvHeads, headSize);
      roundRows(arena, c.value, kv, c.tokens * kvHeads, headSize);
      double[][] expected = c.expected(decode(keyCache, kv, rows, headSize),
          decode(valueCache, kv, rows, headSize), window, softcap);
      MemorySegment.copy(newKeys, 0, c.key, 0, newKeys.byteSize());
      MemorySegment.copy(newValues, 0, c.value, 0, newValues.byteSize());
      new PagedAttentionKernel(4, kvHeads, headSize, 0f, rule, math, kv)
          .run(step(c, keyCache, valueCache), PagedAttentionKernel.Parallel.SERIAL);
      return c.maxError(expected);
    }
  }

  private static MemorySegment copy(Arena arena, MemorySegment m) {
    MemorySegment c = arena.allocate(Math.max(1, m.byteSize()));
    MemorySegment.copy(m, 0, c, 0, m.byteSize());
    return c;
  }

  static PagedAttentionStep step(AttentionCase c, MemorySegment keyCache,
      MemorySegment valueCache) {
    return new PagedAttentionStep(c.query, c.key, c.value, keyCache, valueCache, c.output,
        c.tokens, c.numBlocks, c.blockSize, c.headSize, c.cu.clone(), c.past.clone(),
        c.tables.clone(), c.maxBlocks);
  }
}
