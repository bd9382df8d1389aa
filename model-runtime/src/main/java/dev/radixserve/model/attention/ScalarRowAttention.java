package dev.radixserve.model.attention;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import dev.radixserve.model.graph.KvDtype;
import java.util.Arrays;

/**
 * {@link RowAttention} in plain Java, for JVMs started without {@code jdk.incubator.vector}
 * (about four times slower than {@link VectorRowAttention}; the server warns at start). Row by
 * row: simple rather than fast.
 */
final class ScalarRowAttention implements RowAttention {

  private static final ValueLayout.OfFloat F = ValueLayout.JAVA_FLOAT_UNALIGNED;

  private final KvDtype kv;

  ScalarRowAttention() {
    this(KvDtype.FLOAT32);
  }

  ScalarRowAttention(KvDtype kv) {
    this.kv = kv;
  }

  @Override
  public void attend(QueryRun run, MemorySegment query, MemorySegment keyCache,
      MemorySegment valueCache, MemorySegment out) {
    for (int i = 0; i < run.heads(); i++) {
      attendHead(run.head(i), query, keyCache, valueCache, out);
    }
  }

  private void attendHead(QueryRun run, MemorySegment query, MemorySegment keyCache,
      MemorySegment valueCache, MemorySegment out) {
    Scratch scratch = Scratch.get(run);
    float[] scores = scratch.scores;
    float[] acc = scratch.acc;
    int headSize = run.headSize();
    for (int t = 0; t < run.queries(); t++) {
      long q = run.queryOffset() + t * run.queryStride();
      int len = run.firstLen() + t;
      int from = run.from(t);
      float max = Float.NEGATIVE_INFINITY;
      for (int j = from; j < len; j++) {
        long k = slot(run, j);
        // four partial sums break the add chain's latency
        float s0 = 0;
        float s1 = 0;
        float s2 = 0;
        float s3 = 0;
        int d = 0;
        for (; d + 4 <= headSize; d += 4) {
          long qd = q + (long) d * Float.BYTES;
          s0 += query.get(F, qd) * kv.decode(keyCache, k, d);
          s1 += query.get(F, qd + 4) * kv.decode(keyCache, k, d + 1);
          s2 += query.get(F, qd + 8) * kv.decode(keyCache, k, d + 2);
          s3 += query.get(F, qd + 12) * kv.decode(keyCache, k, d + 3);
        }
        for (; d < headSize; d++) {
          s0 += query.get(F, q + (long) d * Float.BYTES) * kv.decode(keyCache, k, d);
        }
        float s = run.rule().cap(((s0 + s1) + (s2 + s3)) * run.scale());
        scores[j - from] = s;
        max = Math.max(max, s);
      }
      float sum = 0;
      for (int j = 0; j < len - from; j++) {
        float e = (float) Math.exp(scores[j] - max);
        scores[j] = e;
        sum += e;
      }
      Arrays.fill(acc, 0, headSize, 0f);
      for (int j = from; j < len; j++) {
        long v = slot(run, j);
        for (int d = 0; d < headSize; d++) {
          acc[d] += scores[j - from] * kv.decode(valueCache, v, d);
        }
      }
      float inv = 1f / sum;
      for (int d = 0; d < headSize; d++) {
        out.set(F, q + (long) d * Float.BYTES, acc[d] * inv);
      }
    }
  }

  private static long slot(QueryRun run, int j) {
    return ((long) run.table()[run.tableOffset() + j / run.blockSize()] * run.blockSize()
        + j % run.blockSize()) * run.rowBytes() + run.kvOffset(0);
  }
}
