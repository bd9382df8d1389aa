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
 * <p>Scores: per key, lane-wise products summed in two accumulators, one horizontal sum.
 * Softmax: vectorised {@code exp} after subtracting the maximum. Values: each value row scaled by
 * its probability and added into accumulators (no horizontal sums). A head of exactly 8 or 4
 * vectors (GPT-2's 64 floats on AVX2 or AVX-512) keeps the query and the accumulators in
 * registers; other head sizes take a general loop with a scalar tail.
 */
final class VectorRowAttention implements RowAttention {

  private static final VectorSpecies<Float> SP = FloatVector.SPECIES_PREFERRED;
  private static final int L = SP.length();
  private static final long VB = (long) L * Float.BYTES;
  private static final ByteOrder BO = ByteOrder.nativeOrder();
  private static final ValueLayout.OfFloat F = ValueLayout.JAVA_FLOAT_UNALIGNED;
  private static final ThreadLocal<float[]> ACC = ThreadLocal.withInitial(() -> new float[256]);

  @Override
  public void attend(MemorySegment query, long queryOffset, MemorySegment keyCache,
      MemorySegment valueCache, int[] table, int tableOffset, int blockSize, int len,
      int rowFloats, int headOffset, int headSize, float scale, float[] scores,
      MemorySegment out, long outOffset) {
    Rows rows = new Rows(table, tableOffset, blockSize, len, (long) rowFloats * Float.BYTES,
        (long) headOffset * Float.BYTES);
    if (headSize == 8 * L) {
      float max = scores8(query, queryOffset, keyCache, rows, scale, scores);
      float sum = exp(scores, len, max);
      values8(valueCache, rows, scores, 1f / sum, out, outOffset);
    } else if (headSize == 4 * L) {
      float max = scores4(query, queryOffset, keyCache, rows, scale, scores);
      float sum = exp(scores, len, max);
      values4(valueCache, rows, scores, 1f / sum, out, outOffset);
    } else {
      float max = scoresAny(query, queryOffset, keyCache, rows, headSize, scale, scores);
      float sum = exp(scores, len, max);
      valuesAny(valueCache, rows, headSize, scores, 1f / sum, out, outOffset);
    }
  }

  /** Where position j's row starts: {@code offset(j)}; walked block by block. */
  private record Rows(int[] table, int tableOffset, int blockSize, int len, long rowBytes,
      long headBytes) {
    long blockStart(int b) {
      return (long) table[tableOffset + b] * blockSize * rowBytes + headBytes;
    }
  }

  private static FloatVector load(MemorySegment m, long offset) {
    return FloatVector.fromMemorySegment(SP, m, offset, BO);
  }

  // ---- head = 8 vectors ----

  private static float scores8(MemorySegment query, long qo, MemorySegment keys, Rows r,
      float scale, float[] scores) {
    FloatVector q0 = load(query, qo);
    FloatVector q1 = load(query, qo + VB);
    FloatVector q2 = load(query, qo + 2 * VB);
    FloatVector q3 = load(query, qo + 3 * VB);
    FloatVector q4 = load(query, qo + 4 * VB);
    FloatVector q5 = load(query, qo + 5 * VB);
    FloatVector q6 = load(query, qo + 6 * VB);
    FloatVector q7 = load(query, qo + 7 * VB);
    float max = Float.NEGATIVE_INFINITY;
    for (int b = 0, j = 0; j < r.len; b++) {
      int end = Math.min(r.len, j + r.blockSize);
      for (long k = r.blockStart(b); j < end; j++, k += r.rowBytes) {
        FloatVector a = q0.mul(load(keys, k));
        FloatVector c = q1.mul(load(keys, k + VB));
        a = q2.fma(load(keys, k + 2 * VB), a);
        c = q3.fma(load(keys, k + 3 * VB), c);
        a = q4.fma(load(keys, k + 4 * VB), a);
        c = q5.fma(load(keys, k + 5 * VB), c);
        a = q6.fma(load(keys, k + 6 * VB), a);
        c = q7.fma(load(keys, k + 7 * VB), c);
        float s = a.add(c).reduceLanes(VectorOperators.ADD) * scale;
        scores[j] = s;
        max = Math.max(max, s);
      }
    }
    return max;
  }

  private static void values8(MemorySegment values, Rows r, float[] p, float inv,
      MemorySegment out, long oo) {
    FloatVector o0 = FloatVector.zero(SP);
    FloatVector o1 = o0;
    FloatVector o2 = o0;
    FloatVector o3 = o0;
    FloatVector o4 = o0;
    FloatVector o5 = o0;
    FloatVector o6 = o0;
    FloatVector o7 = o0;
    for (int b = 0, j = 0; j < r.len; b++) {
      int end = Math.min(r.len, j + r.blockSize);
      for (long v = r.blockStart(b); j < end; j++, v += r.rowBytes) {
        FloatVector w = FloatVector.broadcast(SP, p[j]);
        o0 = w.fma(load(values, v), o0);
        o1 = w.fma(load(values, v + VB), o1);
        o2 = w.fma(load(values, v + 2 * VB), o2);
        o3 = w.fma(load(values, v + 3 * VB), o3);
        o4 = w.fma(load(values, v + 4 * VB), o4);
        o5 = w.fma(load(values, v + 5 * VB), o5);
        o6 = w.fma(load(values, v + 6 * VB), o6);
        o7 = w.fma(load(values, v + 7 * VB), o7);
      }
    }
    o0.mul(inv).intoMemorySegment(out, oo, BO);
    o1.mul(inv).intoMemorySegment(out, oo + VB, BO);
    o2.mul(inv).intoMemorySegment(out, oo + 2 * VB, BO);
    o3.mul(inv).intoMemorySegment(out, oo + 3 * VB, BO);
    o4.mul(inv).intoMemorySegment(out, oo + 4 * VB, BO);
    o5.mul(inv).intoMemorySegment(out, oo + 5 * VB, BO);
    o6.mul(inv).intoMemorySegment(out, oo + 6 * VB, BO);
    o7.mul(inv).intoMemorySegment(out, oo + 7 * VB, BO);
  }

  // ---- head = 4 vectors ----

  private static float scores4(MemorySegment query, long qo, MemorySegment keys, Rows r,
      float scale, float[] scores) {
    FloatVector q0 = load(query, qo);
    FloatVector q1 = load(query, qo + VB);
    FloatVector q2 = load(query, qo + 2 * VB);
    FloatVector q3 = load(query, qo + 3 * VB);
    float max = Float.NEGATIVE_INFINITY;
    for (int b = 0, j = 0; j < r.len; b++) {
      int end = Math.min(r.len, j + r.blockSize);
      for (long k = r.blockStart(b); j < end; j++, k += r.rowBytes) {
        FloatVector a = q0.mul(load(keys, k));
        FloatVector c = q1.mul(load(keys, k + VB));
        a = q2.fma(load(keys, k + 2 * VB), a);
        c = q3.fma(load(keys, k + 3 * VB), c);
        float s = a.add(c).reduceLanes(VectorOperators.ADD) * scale;
        scores[j] = s;
        max = Math.max(max, s);
      }
    }
    return max;
  }

  private static void values4(MemorySegment values, Rows r, float[] p, float inv,
      MemorySegment out, long oo) {
    FloatVector o0 = FloatVector.zero(SP);
    FloatVector o1 = o0;
    FloatVector o2 = o0;
    FloatVector o3 = o0;
    for (int b = 0, j = 0; j < r.len; b++) {
      int end = Math.min(r.len, j + r.blockSize);
      for (long v = r.blockStart(b); j < end; j++, v += r.rowBytes) {
        FloatVector w = FloatVector.broadcast(SP, p[j]);
        o0 = w.fma(load(values, v), o0);
        o1 = w.fma(load(values, v + VB), o1);
        o2 = w.fma(load(values, v + 2 * VB), o2);
        o3 = w.fma(load(values, v + 3 * VB), o3);
      }
    }
    o0.mul(inv).intoMemorySegment(out, oo, BO);
    o1.mul(inv).intoMemorySegment(out, oo + VB, BO);
    o2.mul(inv).intoMemorySegment(out, oo + 2 * VB, BO);
    o3.mul(inv).intoMemorySegment(out, oo + 3 * VB, BO);
  }

  // ---- any head size ----

  private static float scoresAny(MemorySegment query, long qo, MemorySegment keys, Rows r,
      int headSize, float scale, float[] scores) {
    int vecEnd = headSize - headSize % L;
    float max = Float.NEGATIVE_INFINITY;
    for (int b = 0, j = 0; j < r.len; b++) {
      int end = Math.min(r.len, j + r.blockSize);
      for (long k = r.blockStart(b); j < end; j++, k += r.rowBytes) {
        FloatVector a = FloatVector.zero(SP);
        int d = 0;
        for (; d < vecEnd; d += L) {
          long off = (long) d * Float.BYTES;
          a = load(query, qo + off).fma(load(keys, k + off), a);
        }
        float s = a.reduceLanes(VectorOperators.ADD);
        for (; d < headSize; d++) {
          s += query.get(F, qo + (long) d * Float.BYTES) * keys.get(F, k + (long) d * Float.BYTES);
        }
        s *= scale;
        scores[j] = s;
        max = Math.max(max, s);
      }
    }
    return max;
  }

  private static void valuesAny(MemorySegment values, Rows r, int headSize, float[] p,
      float inv, MemorySegment out, long oo) {
    int vecEnd = headSize - headSize % L;
    float[] acc = ACC.get();
    if (acc.length < headSize) {
      acc = new float[headSize];
      ACC.set(acc);
    }
    java.util.Arrays.fill(acc, 0, headSize, 0f);
    for (int b = 0, j = 0; j < r.len; b++) {
      int end = Math.min(r.len, j + r.blockSize);
      for (long v = r.blockStart(b); j < end; j++, v += r.rowBytes) {
        FloatVector w = FloatVector.broadcast(SP, p[j]);
        int d = 0;
        for (; d < vecEnd; d += L) {
          w.fma(load(values, v + (long) d * Float.BYTES), FloatVector.fromArray(SP, acc, d))
              .intoArray(acc, d);
        }
        for (; d < headSize; d++) {
          acc[d] += p[j] * values.get(F, v + (long) d * Float.BYTES);
        }
      }
    }
    int d = 0;
    for (; d < vecEnd; d += L) {
      FloatVector.fromArray(SP, acc, d).mul(inv).intoMemorySegment(out, oo + (long) d * 4, BO);
    }
    for (; d < headSize; d++) {
      out.set(F, oo + (long) d * Float.BYTES, acc[d] * inv);
    }
  }

  // ---- softmax ----

  /** scores[j] = exp(scores[j] - max) for j < len; returns their sum. */
  private static float exp(float[] scores, int len, float max) {
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
    return sum;
  }
}
