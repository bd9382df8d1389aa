package dev.radixserve.model.attention;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * {@link RowAttention} with the Vector API (AVX2/AVX-512/NEON as the CPU has). Loaded only when
 * the JVM has {@code jdk.incubator.vector} ({@link RowAttention#best()}).
 *
 * <p>Scores: per key, lane-wise products summed into two accumulators, one horizontal sum.
 * Softmax: vectorised {@code exp}. Values: each value row scaled by its probability and added
 * into head-size accumulators held in {@code acc} (no horizontal sums). Head sizes that are not
 * a multiple of the lane count finish with a scalar tail.
 */
final class VectorRowAttention implements RowAttention {

  private static final VectorSpecies<Float> SP = FloatVector.SPECIES_PREFERRED;
  private static final int L = SP.length();
  private static final ByteOrder BO = ByteOrder.nativeOrder();
  private static final ValueLayout.OfFloat F = ValueLayout.JAVA_FLOAT_UNALIGNED;
  private static final ThreadLocal<float[]> ACC = ThreadLocal.withInitial(() -> new float[256]);

  @Override
  public void attend(MemorySegment query, long queryOffset, MemorySegment keyCache,
      MemorySegment valueCache, int[] table, int tableOffset, int blockSize, int len,
      int rowFloats, int headOffset, int headSize, float scale, float[] scores,
      MemorySegment out, long outOffset) {
    long rowBytes = (long) rowFloats * Float.BYTES;
    long head = (long) headOffset * Float.BYTES;
    int vecEnd = headSize - headSize % L;
    float max = Float.NEGATIVE_INFINITY;
    int j = 0;
    for (int b = tableOffset; j < len; b++) {
      long base = (long) table[b] * blockSize * rowBytes + head;
      int end = Math.min(len, j + blockSize);
      for (long k = base; j < end; j++, k += rowBytes) {
        FloatVector a0 = FloatVector.zero(SP);
        FloatVector a1 = FloatVector.zero(SP);
        int d = 0;
        for (; d + 2 * L <= vecEnd; d += 2 * L) {
          long off = (long) d * Float.BYTES;
          a0 = FloatVector.fromMemorySegment(SP, query, queryOffset + off, BO)
              .fma(FloatVector.fromMemorySegment(SP, keyCache, k + off, BO), a0);
          a1 = FloatVector.fromMemorySegment(SP, query, queryOffset + off + L * 4L, BO)
              .fma(FloatVector.fromMemorySegment(SP, keyCache, k + off + L * 4L, BO), a1);
        }
        for (; d < vecEnd; d += L) {
          long off = (long) d * Float.BYTES;
          a0 = FloatVector.fromMemorySegment(SP, query, queryOffset + off, BO)
              .fma(FloatVector.fromMemorySegment(SP, keyCache, k + off, BO), a0);
        }
        float s = a0.add(a1).reduceLanes(VectorOperators.ADD);
        for (; d < headSize; d++) {
          s += query.get(F, queryOffset + (long) d * Float.BYTES)
              * keyCache.get(F, k + (long) d * Float.BYTES);
        }
        s *= scale;
        scores[j] = s;
        max = Math.max(max, s);
      }
    }
    FloatVector vmax = FloatVector.broadcast(SP, max);
    FloatVector vsum = FloatVector.zero(SP);
    int i = 0;
    for (; i + L <= len; i += L) {
      FloatVector e = FloatVector.fromArray(SP, scores, i).sub(vmax).lanewise(VectorOperators.EXP);
      e.intoArray(scores, i);
      vsum = vsum.add(e);
    }
    float sum = vsum.reduceLanes(VectorOperators.ADD);
    for (; i < len; i++) {
      float e = (float) Math.exp(scores[i] - max);
      scores[i] = e;
      sum += e;
    }
    float[] acc = accumulator(headSize);
    java.util.Arrays.fill(acc, 0, headSize, 0f);
    j = 0;
    for (int b = tableOffset; j < len; b++) {
      long base = (long) table[b] * blockSize * rowBytes + head;
      int end = Math.min(len, j + blockSize);
      for (long v = base; j < end; j++, v += rowBytes) {
        float p = scores[j];
        FloatVector pv = FloatVector.broadcast(SP, p);
        int d = 0;
        for (; d < vecEnd; d += L) {
          pv.fma(FloatVector.fromMemorySegment(SP, valueCache, v + (long) d * Float.BYTES, BO),
              FloatVector.fromArray(SP, acc, d)).intoArray(acc, d);
        }
        for (; d < headSize; d++) {
          acc[d] += p * valueCache.get(F, v + (long) d * Float.BYTES);
        }
      }
    }
    float inv = 1f / sum;
    int d = 0;
    for (; d < vecEnd; d += L) {
      FloatVector.fromArray(SP, acc, d).mul(inv)
          .intoMemorySegment(out, outOffset + (long) d * Float.BYTES, BO);
    }
    for (; d < headSize; d++) {
      out.set(F, outOffset + (long) d * Float.BYTES, acc[d] * inv);
    }
  }

  private static float[] accumulator(int headSize) {
    float[] acc = ACC.get();
    if (acc.length < headSize) {
      acc = new float[headSize];
      ACC.set(acc);
    }
    return acc;
  }
}
