package dev.radixserve.model.attention;

import static dev.radixserve.model.attention.VectorRowAttention.L;
import static dev.radixserve.model.attention.VectorRowAttention.SP;

import dev.radixserve.model.attention.RowAttention.QueryRun;
import jdk.incubator.vector.FloatVector;

/**
 * The weighted sums of a multi-query run's value rows, two query rows at a time: each value
 * vector loaded feeds both rows' fmas, 8 vectors of the head per pass (16 accumulators in
 * registers). Per output element the operations are {@link VectorRowAttention}'s value loops' own,
 * in their order ({@code acc += p_j * v_j}, positions ascending), so a token's output has a
 * decode step's bits. Rows t and t + 1 share the block's positions but the window's start and
 * the causal edge: row t's first positions go alone first, then both rows, then row t + 1's
 * last, which keeps each row's positions in order. Heap arrays for {@link TiledScores}' reason.
 */
final class TiledValues {

  private TiledValues() {}

  /** Whether a head of this size is whole chunks of 8 vectors. */
  static boolean fits(int headSize) {
    return L == 8 && headSize % (8 * L) == 0;
  }

  /**
   * acc[r] += p[r][j] * v_j for the positions j in [j0, end) (whole blocks) each row sees; {@code p}: the run's
   * softmax numerators (row r, position j at {@code r * width + j - lo}); {@code values}: the
   * span's value rows, fp32, position j at {@code (j - j0) * headSize}; acc row r at {@code r *
   * headSize}.
   */
  static void span(QueryRun run, float[] p, float[] values, int j0, int end, float[] acc) {
    int n = run.queries();
    int w = run.width();
    int hd = run.headSize();
    int v0 = -j0 * hd;
    for (int i = 0; i < run.heads(); i++) {
      for (int t = Math.max(0, j0 - run.firstLen() + 1); t < n; t += 2) {
        int b0 = Math.max(j0, run.from(t));
        if (b0 >= end) {
          break;
        }
        int e0 = Math.min(end, run.firstLen() + t);
        int r0 = i * n + t;
        int p0 = r0 * w - run.lo();
        if (t + 1 == n) {
          row(p, p0, values, v0, b0, e0, acc, r0 * hd, hd);
          break;
        }
        int b1 = Math.max(j0, run.from(t + 1));
        int e1 = Math.min(end, run.firstLen() + t + 1);
        row(p, p0, values, v0, b0, Math.min(b1, e0), acc, r0 * hd, hd);
        if (b1 < e0) {
          for (int d = 0; d < hd; d += 8 * L) {
            pair(p, p0, p0 + w, values, v0 + d, b1, e0, acc, r0 * hd + d, hd);
          }
        }
        row(p, p0 + w, values, v0, Math.max(b1, e0), e1, acc, (r0 + 1) * hd, hd);
      }
    }
  }

  /** One row's positions [from, to), 8 vectors at a time. */
  static void row(float[] p, int base, float[] values, int v0, int from, int to,
      float[] acc, int a, int hd) {
    if (from >= to) {
      return;
    }
    if (WideTiles.ON) {
      WideTiles.valueRow(p, base, values, v0, from, to, acc, a, hd);
      return;
    }
    for (int d = 0; d < hd; d += 8 * L) {
      FloatVector o0 = FloatVector.fromArray(SP, acc, a + d);
      FloatVector o1 = FloatVector.fromArray(SP, acc, a + d + L);
      FloatVector o2 = FloatVector.fromArray(SP, acc, a + d + 2 * L);
      FloatVector o3 = FloatVector.fromArray(SP, acc, a + d + 3 * L);
      FloatVector o4 = FloatVector.fromArray(SP, acc, a + d + 4 * L);
      FloatVector o5 = FloatVector.fromArray(SP, acc, a + d + 5 * L);
      FloatVector o6 = FloatVector.fromArray(SP, acc, a + d + 6 * L);
      FloatVector o7 = FloatVector.fromArray(SP, acc, a + d + 7 * L);
      for (int j = from; j < to; j++) {
        FloatVector x = FloatVector.broadcast(SP, p[base + j]);
        int v = v0 + j * hd + d;
        o0 = x.fma(FloatVector.fromArray(SP, values, v), o0);
        o1 = x.fma(FloatVector.fromArray(SP, values, v + L), o1);
        o2 = x.fma(FloatVector.fromArray(SP, values, v + 2 * L), o2);
        o3 = x.fma(FloatVector.fromArray(SP, values, v + 3 * L), o3);
        o4 = x.fma(FloatVector.fromArray(SP, values, v + 4 * L), o4);
        o5 = x.fma(FloatVector.fromArray(SP, values, v + 5 * L), o5);
        o6 = x.fma(FloatVector.fromArray(SP, values, v + 6 * L), o6);
        o7 = x.fma(FloatVector.fromArray(SP, values, v + 7 * L), o7);
      }
      o0.intoArray(acc, a + d);
      o1.intoArray(acc, a + d + L);
      o2.intoArray(acc, a + d + 2 * L);
      o3.intoArray(acc, a + d + 3 * L);
      o4.intoArray(acc, a + d + 4 * L);
      o5.intoArray(acc, a + d + 5 * L);
      o6.intoArray(acc, a + d + 6 * L);
      o7.intoArray(acc, a + d + 7 * L);
    }
  }

  /**
   * Rows r and r + 1 (numerators from {@code base0}, {@code base1}), 8 vectors from {@code
   * a}'s (the next row's at {@code a + hd}), positions [from, to); value vectors from {@code
   * v0 + j * hd}.
   */
  static void pair(float[] p, int base0, int base1, float[] values, int v0, int from,
      int to, float[] acc, int a, int hd) {
    if (WideTiles.ON) {
      WideTiles.valuePair(p, base0, base1, values, v0, from, to, acc, a, hd);
      return;
    }
    int b = a + hd;
    FloatVector o0 = FloatVector.fromArray(SP, acc, a);
    FloatVector o1 = FloatVector.fromArray(SP, acc, a + L);
    FloatVector o2 = FloatVector.fromArray(SP, acc, a + 2 * L);
    FloatVector o3 = FloatVector.fromArray(SP, acc, a + 3 * L);
    FloatVector o4 = FloatVector.fromArray(SP, acc, a + 4 * L);
    FloatVector o5 = FloatVector.fromArray(SP, acc, a + 5 * L);
    FloatVector o6 = FloatVector.fromArray(SP, acc, a + 6 * L);
    FloatVector o7 = FloatVector.fromArray(SP, acc, a + 7 * L);
    FloatVector n0 = FloatVector.fromArray(SP, acc, b);
    FloatVector n1 = FloatVector.fromArray(SP, acc, b + L);
    FloatVector n2 = FloatVector.fromArray(SP, acc, b + 2 * L);
    FloatVector n3 = FloatVector.fromArray(SP, acc, b + 3 * L);
    FloatVector n4 = FloatVector.fromArray(SP, acc, b + 4 * L);
    FloatVector n5 = FloatVector.fromArray(SP, acc, b + 5 * L);
    FloatVector n6 = FloatVector.fromArray(SP, acc, b + 6 * L);
    FloatVector n7 = FloatVector.fromArray(SP, acc, b + 7 * L);
    for (int j = from; j < to; j++) {
      FloatVector x = FloatVector.broadcast(SP, p[base0 + j]);
      FloatVector y = FloatVector.broadcast(SP, p[base1 + j]);
      int v = v0 + j * hd;
      FloatVector u = FloatVector.fromArray(SP, values, v);
      o0 = x.fma(u, o0);
      n0 = y.fma(u, n0);
      u = FloatVector.fromArray(SP, values, v + L);
      o1 = x.fma(u, o1);
      n1 = y.fma(u, n1);
      u = FloatVector.fromArray(SP, values, v + 2 * L);
      o2 = x.fma(u, o2);
      n2 = y.fma(u, n2);
      u = FloatVector.fromArray(SP, values, v + 3 * L);
      o3 = x.fma(u, o3);
      n3 = y.fma(u, n3);
      u = FloatVector.fromArray(SP, values, v + 4 * L);
      o4 = x.fma(u, o4);
      n4 = y.fma(u, n4);
      u = FloatVector.fromArray(SP, values, v + 5 * L);
      o5 = x.fma(u, o5);
      n5 = y.fma(u, n5);
      u = FloatVector.fromArray(SP, values, v + 6 * L);
      o6 = x.fma(u, o6);
      n6 = y.fma(u, n6);
      u = FloatVector.fromArray(SP, values, v + 7 * L);
      o7 = x.fma(u, o7);
      n7 = y.fma(u, n7);
    }
    o0.intoArray(acc, a);
    o1.intoArray(acc, a + L);
    o2.intoArray(acc, a + 2 * L);
    o3.intoArray(acc, a + 3 * L);
    o4.intoArray(acc, a + 4 * L);
    o5.intoArray(acc, a + 5 * L);
    o6.intoArray(acc, a + 6 * L);
    o7.intoArray(acc, a + 7 * L);
    n0.intoArray(acc, b);
    n1.intoArray(acc, b + L);
    n2.intoArray(acc, b + 2 * L);
    n3.intoArray(acc, b + 3 * L);
    n4.intoArray(acc, b + 4 * L);
    n5.intoArray(acc, b + 5 * L);
    n6.intoArray(acc, b + 6 * L);
    n7.intoArray(acc, b + 7 * L);
  }
}
