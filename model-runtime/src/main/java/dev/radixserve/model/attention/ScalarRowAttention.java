package dev.radixserve.model.attention;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * {@link RowAttention} in plain Java, for JVMs started without {@code jdk.incubator.vector}
 * (about four times slower than {@link VectorRowAttention}; the server warns at start).
 */
final class ScalarRowAttention implements RowAttention {

  private static final ValueLayout.OfFloat F = ValueLayout.JAVA_FLOAT_UNALIGNED;

  @Override
  public void attend(MemorySegment query, long queryOffset, MemorySegment keyCache,
      MemorySegment valueCache, int[] table, int tableOffset, int blockSize, int len,
      int rowFloats, int headOffset, int headSize, float scale, float[] scores,
      MemorySegment out, long outOffset) {
    long rowBytes = (long) rowFloats * Float.BYTES;
    long head = (long) headOffset * Float.BYTES;
    float max = Float.NEGATIVE_INFINITY;
    for (int j = 0; j < len; j++) {
      long k = ((long) table[tableOffset + j / blockSize] * blockSize + j % blockSize) * rowBytes
          + head;
      // four partial sums break the add chain's latency
      float s0 = 0;
      float s1 = 0;
      float s2 = 0;
      float s3 = 0;
      int d = 0;
      for (; d + 4 <= headSize; d += 4) {
        long q = queryOffset + (long) d * Float.BYTES;
        long kd = k + (long) d * Float.BYTES;
        s0 += query.get(F, q) * keyCache.get(F, kd);
        s1 += query.get(F, q + 4) * keyCache.get(F, kd + 4);
        s2 += query.get(F, q + 8) * keyCache.get(F, kd + 8);
        s3 += query.get(F, q + 12) * keyCache.get(F, kd + 12);
      }
      for (; d < headSize; d++) {
        s0 += query.get(F, queryOffset + (long) d * Float.BYTES)
            * keyCache.get(F, k + (long) d * Float.BYTES);
      }
      float s = ((s0 + s1) + (s2 + s3)) * scale;
      scores[j] = s;
      max = Math.max(max, s);
    }
    float sum = 0;
    for (int j = 0; j < len; j++) {
      float e = (float) Math.exp(scores[j] - max);
      scores[j] = e;
      sum += e;
    }
    float inv = 1f / sum;
    for (int d = 0; d < headSize; d++) {
      out.set(F, outOffset + (long) d * Float.BYTES, 0f);
    }
    for (int j = 0; j < len; j++) {
      long v = ((long) table[tableOffset + j / blockSize] * blockSize + j % blockSize) * rowBytes
          + head;
      float p = scores[j] * inv;
      for (int d = 0; d < headSize; d++) {
        long o = outOffset + (long) d * Float.BYTES;
        out.set(F, o, out.get(F, o) + p * valueCache.get(F, v + (long) d * Float.BYTES));
      }
    }
  }
}
