package dev.radixserve.model.attention;

import static dev.radixserve.model.attention.VectorRowAttention.L;

import dev.radixserve.model.attention.RowAttention.QueryRun;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

/**
 * {@link TiledScores}' and {@link TiledValues}' tiles on 512-bit vectors, for CPUs that have them
 * (AVX-512), with the 256-bit tiles' bits.
 *
 * <p>Why the bits are the same: the kernel's dots keep 8-lane chains, even vectors of the head in
 * one ({@code a}) and odd ones in another ({@code c}), summed at the end by a fixed tree
 * ({@link StableLanes#sum}). A 512-bit load of 16 floats from an even vector's start is an even
 * vector in lanes 0-7 and the next odd one in lanes 8-15, so one 512-bit chain is {@code a} and
 * {@code c} side by side: the same fmas, per lane, in the same order. The tree is then written
 * for two 8-lane groups per vector (below); float addition is commutative bit for bit, so only
 * which lanes meet, never their operand order, has to match. The value sums are lane-wise
 * ({@code acc += p_j * v_j} per element, positions ascending), so their width changes nothing.
 * The softmax and the per-pair loops of {@link VectorRowAttention} stay at 256 bits.
 *
 * <p>What it buys (TileBench-style timing of one tile call over a block of 16 keys and two query
 * rows of 64, Zen 5): the width alone bought nothing in the score tile (~98 ns either way); holding
 * the two query rows in registers for the whole range did (~62 ns), which at 256 bits would take
 * all 16 of AVX2's registers for a 64-float head, and here takes 8 (16 for a head of 128) of
 * AVX-512's 32. The value tile keeps 8 accumulators of 16 lanes. Multi-query runs (prefill,
 * speculative verification) and grouped-query decode steps take these tiles.
 *
 * <pre>
 *   a_tj = [a | c] of row t, position j (8 accumulators for rows t, t+1 and positions j..j+3)
 *   level 0  [a_tj | a_t+1,j] -> [a+c of (t, j) | a+c of (t+1, j)]        (blend, rotate by 8)
 *   level 1  positions j and j+2, j+1 and j+3: each group's lanes i and i+4 (4-lane quarters)
 *   level 2  the two vectors: each group's lanes i and i+2 (pairs of lanes)
 *   level 3  lanes 2m and 2m+1: sums of (t, j..j+3) and (t+1, j..j+3) in the even lanes,
 *            moved to lanes 0-7 by one shuffle
 * </pre>
 *
 * {@code -Dradixserve.attention.tileBits=256} keeps the 256-bit tiles on an AVX-512 CPU (A/B
 * runs); {@code 512} takes these tiles on any CPU (tests: without AVX-512 the Vector API
 * emulates them, slowly, with the same results).
 */
final class WideTiles {

  static final String BITS_PROPERTY = "radixserve.attention.tileBits";

  /** Whether the tiles take 512-bit vectors: only over 8-lane chains, where the CPU has them. */
  static final boolean ON = L == 8 && Integer.getInteger(BITS_PROPERTY,
      FloatVector.SPECIES_PREFERRED.vectorBitSize()) >= 512;

  /** Whether {@link #scorePairs} takes a head of this size: 4 or 8 vectors, held in registers. */
  static boolean holdsQueries(int headSize) {
    return headSize == 64 || headSize == 128;
  }

  private static final VectorSpecies<Float> W = FloatVector.SPECIES_512;
  private static final int WL = 16;

  // static final for StableLanes' reason: C2 takes them as constants
  private static final VectorMask<Float> HIGH_HALF = VectorMask.fromLong(W, 0xFF00);
  private static final VectorMask<Float> ODD_QUARTERS = VectorMask.fromLong(W, 0xF0F0);
  private static final VectorMask<Float> HIGH_PAIRS = VectorMask.fromLong(W, 0xCCCC);
  private static final VectorMask<Float> LANES_0_3 = VectorMask.fromLong(W, 0x000F);
  private static final VectorMask<Float> LANES_4_7 = VectorMask.fromLong(W, 0x00F0);
  private static final VectorShuffle<Float> ROT8 = shuffle(i -> (i + 8) & 15);
  private static final VectorShuffle<Float> ROT4 = shuffle(i -> (i + 4) & 15);
  private static final VectorShuffle<Float> ROT2 = shuffle(i -> (i + 2) & 15);
  private static final VectorShuffle<Float> ROT1 = shuffle(i -> (i + 1) & 15);
  private static final VectorShuffle<Float> ROT4_IN_HALVES = shuffle(i -> (i & ~7) | ((i + 4) & 7));
  private static final VectorShuffle<Float> ROT2_IN_QUARTERS =
      shuffle(i -> (i & ~3) | ((i + 2) & 3));
  private static final VectorShuffle<Float> SWAP = shuffle(i -> i ^ 1);
  private static final VectorShuffle<Float> EVENS = shuffle(i -> (2 * i) & 15);

  private WideTiles() {}

  private static VectorShuffle<Float> shuffle(java.util.function.IntUnaryOperator lane) {
    return VectorShuffle.fromOp(W, lane);
  }

  /** {@link TiledScores#row} on 512-bit chains. */
  static void scoreRow(QueryRun run, float[] queries, int q, float[] keys, int k0, int from,
      int to, float[] scores, int base, float[] max, int r) {
    int hd = run.headSize();
    boolean eight = hd == 8 * L;
    float m = max[r];
    FloatVector zero = FloatVector.zero(W);
    for (int j = from; j < to; j++) {
      int k = k0 + j * hd;
      FloatVector x = FloatVector.fromArray(W, queries, q);
      FloatVector u = FloatVector.fromArray(W, keys, k);
      FloatVector a = eight ? x.mul(u) : x.fma(u, zero);
      for (int e = WL; e < hd; e += WL) {
        a = FloatVector.fromArray(W, queries, q + e).fma(FloatVector.fromArray(W, keys, k + e),
            a);
      }
      // lane 0 only: a + c, then lanes (0, 4), (0, 2), (0, 1) as StableLanes.sum
      FloatVector v = a.add(a.rearrange(ROT8));
      v = v.add(v.rearrange(ROT4));
      v = v.add(v.rearrange(ROT2));
      float s = run.rule().cap(v.add(v.rearrange(ROT1)).lane(0) * run.scale());
      scores[base + j] = s;
      m = Math.max(m, s);
    }
    max[r] = m;
  }

  /**
   * {@link TiledScores#pairs} on 512-bit chains: rows r and r + 1, four positions a tile, for a
   * head of 64 or 128 floats ({@link #holdsQueries}). The two query rows stay in registers for
   * the whole range (8 or 16 of the 32; C2 cannot hoist their loads itself, as the score stores
   * could alias them): ~1.5x fewer cycles a tile than reloading them per tile.
   */
  static void scorePairs(QueryRun run, float[] queries, int q0, float[] keys, int k0, int from,
      int to, float[] scores, int base0, float[] max, int r) {
    int hd = run.headSize();
    int q1 = q0 + hd;
    int base1 = base0 + run.width();
    boolean eight = hd == 8 * L; // dot8's chains start with a product, dot's with an fma on 0
    boolean wide = hd == 16 * L;
    float scale = run.scale();
    ScoreRule rule = run.rule();
    float m0 = max[r];
    float m1 = max[r + 1];
    FloatVector zero = FloatVector.zero(W);
    FloatVector maxima = FloatVector.broadcast(W, Float.NEGATIVE_INFINITY);
    boolean capped = rule.softcap() != 0f;
    FloatVector x0 = FloatVector.fromArray(W, queries, q0);
    FloatVector x1 = FloatVector.fromArray(W, queries, q0 + WL);
    FloatVector x2 = FloatVector.fromArray(W, queries, q0 + 2 * WL);
    FloatVector x3 = FloatVector.fromArray(W, queries, q0 + 3 * WL);
    FloatVector y0 = FloatVector.fromArray(W, queries, q1);
    FloatVector y1 = FloatVector.fromArray(W, queries, q1 + WL);
    FloatVector y2 = FloatVector.fromArray(W, queries, q1 + 2 * WL);
    FloatVector y3 = FloatVector.fromArray(W, queries, q1 + 3 * WL);
    // a head of 128: its second 64 floats (unused, and never loaded, for a head of 64)
    FloatVector x4 = wide ? FloatVector.fromArray(W, queries, q0 + 4 * WL) : zero;
    FloatVector x5 = wide ? FloatVector.fromArray(W, queries, q0 + 5 * WL) : zero;
    FloatVector x6 = wide ? FloatVector.fromArray(W, queries, q0 + 6 * WL) : zero;
    FloatVector x7 = wide ? FloatVector.fromArray(W, queries, q0 + 7 * WL) : zero;
    FloatVector y4 = wide ? FloatVector.fromArray(W, queries, q1 + 4 * WL) : zero;
    FloatVector y5 = wide ? FloatVector.fromArray(W, queries, q1 + 5 * WL) : zero;
    FloatVector y6 = wide ? FloatVector.fromArray(W, queries, q1 + 6 * WL) : zero;
    FloatVector y7 = wide ? FloatVector.fromArray(W, queries, q1 + 7 * WL) : zero;
    int j = from;
    for (; j + 3 < to; j += 4) {
      int k = k0 + j * hd;
      int kv = k + hd;
      int kw = k + 2 * hd;
      int kx = k + 3 * hd;
      // a<row><position>
      FloatVector u = FloatVector.fromArray(W, keys, k);
      FloatVector v = FloatVector.fromArray(W, keys, kv);
      FloatVector uu = FloatVector.fromArray(W, keys, kw);
      FloatVector vv = FloatVector.fromArray(W, keys, kx);
      FloatVector a00 = eight ? x0.mul(u) : x0.fma(u, zero);
      FloatVector a10 = eight ? y0.mul(u) : y0.fma(u, zero);
      FloatVector a01 = eight ? x0.mul(v) : x0.fma(v, zero);
      FloatVector a11 = eight ? y0.mul(v) : y0.fma(v, zero);
      FloatVector a02 = eight ? x0.mul(uu) : x0.fma(uu, zero);
      FloatVector a12 = eight ? y0.mul(uu) : y0.fma(uu, zero);
      FloatVector a03 = eight ? x0.mul(vv) : x0.fma(vv, zero);
      FloatVector a13 = eight ? y0.mul(vv) : y0.fma(vv, zero);
      u = FloatVector.fromArray(W, keys, k + WL);
      v = FloatVector.fromArray(W, keys, kv + WL);
      uu = FloatVector.fromArray(W, keys, kw + WL);
      vv = FloatVector.fromArray(W, keys, kx + WL);
      a00 = x1.fma(u, a00);
      a10 = y1.fma(u, a10);
      a01 = x1.fma(v, a01);
      a11 = y1.fma(v, a11);
      a02 = x1.fma(uu, a02);
      a12 = y1.fma(uu, a12);
      a03 = x1.fma(vv, a03);
      a13 = y1.fma(vv, a13);
      u = FloatVector.fromArray(W, keys, k + 2 * WL);
      v = FloatVector.fromArray(W, keys, kv + 2 * WL);
      uu = FloatVector.fromArray(W, keys, kw + 2 * WL);
      vv = FloatVector.fromArray(W, keys, kx + 2 * WL);
      a00 = x2.fma(u, a00);
      a10 = y2.fma(u, a10);
      a01 = x2.fma(v, a01);
      a11 = y2.fma(v, a11);
      a02 = x2.fma(uu, a02);
      a12 = y2.fma(uu, a12);
      a03 = x2.fma(vv, a03);
      a13 = y2.fma(vv, a13);
      u = FloatVector.fromArray(W, keys, k + 3 * WL);
      v = FloatVector.fromArray(W, keys, kv + 3 * WL);
      uu = FloatVector.fromArray(W, keys, kw + 3 * WL);
      vv = FloatVector.fromArray(W, keys, kx + 3 * WL);
      a00 = x3.fma(u, a00);
      a10 = y3.fma(u, a10);
      a01 = x3.fma(v, a01);
      a11 = y3.fma(v, a11);
      a02 = x3.fma(uu, a02);
      a12 = y3.fma(uu, a12);
      a03 = x3.fma(vv, a03);
      a13 = y3.fma(vv, a13);
      if (wide) {
        u = FloatVector.fromArray(W, keys, k + 4 * WL);
        v = FloatVector.fromArray(W, keys, kv + 4 * WL);
        uu = FloatVector.fromArray(W, keys, kw + 4 * WL);
        vv = FloatVector.fromArray(W, keys, kx + 4 * WL);
        a00 = x4.fma(u, a00);
        a10 = y4.fma(u, a10);
        a01 = x4.fma(v, a01);
        a11 = y4.fma(v, a11);
        a02 = x4.fma(uu, a02);
        a12 = y4.fma(uu, a12);
        a03 = x4.fma(vv, a03);
        a13 = y4.fma(vv, a13);
        u = FloatVector.fromArray(W, keys, k + 5 * WL);
        v = FloatVector.fromArray(W, keys, kv + 5 * WL);
        uu = FloatVector.fromArray(W, keys, kw + 5 * WL);
        vv = FloatVector.fromArray(W, keys, kx + 5 * WL);
        a00 = x5.fma(u, a00);
        a10 = y5.fma(u, a10);
        a01 = x5.fma(v, a01);
        a11 = y5.fma(v, a11);
        a02 = x5.fma(uu, a02);
        a12 = y5.fma(uu, a12);
        a03 = x5.fma(vv, a03);
        a13 = y5.fma(vv, a13);
        u = FloatVector.fromArray(W, keys, k + 6 * WL);
        v = FloatVector.fromArray(W, keys, kv + 6 * WL);
        uu = FloatVector.fromArray(W, keys, kw + 6 * WL);
        vv = FloatVector.fromArray(W, keys, kx + 6 * WL);
        a00 = x6.fma(u, a00);
        a10 = y6.fma(u, a10);
        a01 = x6.fma(v, a01);
        a11 = y6.fma(v, a11);
        a02 = x6.fma(uu, a02);
        a12 = y6.fma(uu, a12);
        a03 = x6.fma(vv, a03);
        a13 = y6.fma(vv, a13);
        u = FloatVector.fromArray(W, keys, k + 7 * WL);
        v = FloatVector.fromArray(W, keys, kv + 7 * WL);
        uu = FloatVector.fromArray(W, keys, kw + 7 * WL);
        vv = FloatVector.fromArray(W, keys, kx + 7 * WL);
        a00 = x7.fma(u, a00);
        a10 = y7.fma(u, a10);
        a01 = x7.fma(v, a01);
        a11 = y7.fma(v, a11);
        a02 = x7.fma(uu, a02);
        a12 = y7.fma(uu, a12);
        a03 = x7.fma(vv, a03);
        a13 = y7.fma(vv, a13);
      }
      // the tree (class comment), written out: no vector crosses a call
      FloatVector p0 = a00.blend(a10, HIGH_HALF).add(a10.blend(a00, HIGH_HALF).rearrange(ROT8));
      FloatVector p1 = a01.blend(a11, HIGH_HALF).add(a11.blend(a01, HIGH_HALF).rearrange(ROT8));
      FloatVector p2 = a02.blend(a12, HIGH_HALF).add(a12.blend(a02, HIGH_HALF).rearrange(ROT8));
      FloatVector p3 = a03.blend(a13, HIGH_HALF).add(a13.blend(a03, HIGH_HALF).rearrange(ROT8));
      // quarters: (t, j), (t, j + 2), (t + 1, j), (t + 1, j + 2); and j + 1, j + 3
      FloatVector r02 = p0.blend(p2, ODD_QUARTERS)
          .add(p2.blend(p0, ODD_QUARTERS).rearrange(ROT4_IN_HALVES));
      FloatVector r13 = p1.blend(p3, ODD_QUARTERS)
          .add(p3.blend(p1, ODD_QUARTERS).rearrange(ROT4_IN_HALVES));
      // pairs of lanes: (t, j), (t, j + 1), (t, j + 2), ... (t + 1, j + 3)
      FloatVector s = r02.blend(r13, HIGH_PAIRS)
          .add(r13.blend(r02, HIGH_PAIRS).rearrange(ROT2_IN_QUARTERS));
      // lanes 0-3: row t's positions j .. j + 3; 4-7: row t + 1's (8-15: the same again)
      FloatVector sums = s.add(s.rearrange(SWAP)).rearrange(EVENS).mul(scale);
      if (capped) {
        float s00 = rule.cap(sums.lane(0));
        float s01 = rule.cap(sums.lane(1));
        float s02 = rule.cap(sums.lane(2));
        float s03 = rule.cap(sums.lane(3));
        float s10 = rule.cap(sums.lane(4));
        float s11 = rule.cap(sums.lane(5));
        float s12 = rule.cap(sums.lane(6));
        float s13 = rule.cap(sums.lane(7));
        scores[base0 + j] = s00;
        scores[base0 + j + 1] = s01;
        scores[base0 + j + 2] = s02;
        scores[base0 + j + 3] = s03;
        scores[base1 + j] = s10;
        scores[base1 + j + 1] = s11;
        scores[base1 + j + 2] = s12;
        scores[base1 + j + 3] = s13;
        m0 = Math.max(m0, Math.max(Math.max(s00, s01), Math.max(s02, s03)));
        m1 = Math.max(m1, Math.max(Math.max(s10, s11), Math.max(s12, s13)));
      } else {
        sums.intoArray(scores, base0 + j, LANES_0_3);
        sums.intoArray(scores, base1 + j - 4, LANES_4_7);
        maxima = maxima.max(sums);
      }
    }
    if (j > from && !capped) { // constant lane indices: a variable one is not an intrinsic
      m0 = Math.max(Math.max(m0, Math.max(maxima.lane(0), maxima.lane(1))),
          Math.max(maxima.lane(2), maxima.lane(3)));
      m1 = Math.max(Math.max(m1, Math.max(maxima.lane(4), maxima.lane(5))),
          Math.max(maxima.lane(6), maxima.lane(7)));
    }
    max[r] = m0;
    max[r + 1] = m1;
    if (j < to) {
      scoreRow(run, queries, q0, keys, k0, j, to, scores, base0, max, r);
      scoreRow(run, queries, q1, keys, k0, j, to, scores, base1, max, r + 1);
    }
  }

  /** {@link TiledValues#row} on 512-bit vectors: 8 of 256 bits' floats as 4. */
  static void valueRow(float[] p, int base, float[] values, int v0, int from, int to,
      float[] acc, int a, int hd) {
    if (from >= to) {
      return;
    }
    for (int d = 0; d < hd; d += 4 * WL) {
      FloatVector o0 = FloatVector.fromArray(W, acc, a + d);
      FloatVector o1 = FloatVector.fromArray(W, acc, a + d + WL);
      FloatVector o2 = FloatVector.fromArray(W, acc, a + d + 2 * WL);
      FloatVector o3 = FloatVector.fromArray(W, acc, a + d + 3 * WL);
      for (int j = from; j < to; j++) {
        FloatVector x = FloatVector.broadcast(W, p[base + j]);
        int v = v0 + j * hd + d;
        o0 = x.fma(FloatVector.fromArray(W, values, v), o0);
        o1 = x.fma(FloatVector.fromArray(W, values, v + WL), o1);
        o2 = x.fma(FloatVector.fromArray(W, values, v + 2 * WL), o2);
        o3 = x.fma(FloatVector.fromArray(W, values, v + 3 * WL), o3);
      }
      o0.intoArray(acc, a + d);
      o1.intoArray(acc, a + d + WL);
      o2.intoArray(acc, a + d + 2 * WL);
      o3.intoArray(acc, a + d + 3 * WL);
    }
  }

  /** {@link TiledValues#pair} on 512-bit vectors: 64 floats of rows r and r + 1. */
  static void valuePair(float[] p, int base0, int base1, float[] values, int v0, int from,
      int to, float[] acc, int a, int hd) {
    int b = a + hd;
    FloatVector o0 = FloatVector.fromArray(W, acc, a);
    FloatVector o1 = FloatVector.fromArray(W, acc, a + WL);
    FloatVector o2 = FloatVector.fromArray(W, acc, a + 2 * WL);
    FloatVector o3 = FloatVector.fromArray(W, acc, a + 3 * WL);
    FloatVector n0 = FloatVector.fromArray(W, acc, b);
    FloatVector n1 = FloatVector.fromArray(W, acc, b + WL);
    FloatVector n2 = FloatVector.fromArray(W, acc, b + 2 * WL);
    FloatVector n3 = FloatVector.fromArray(W, acc, b + 3 * WL);
    for (int j = from; j < to; j++) {
      FloatVector x = FloatVector.broadcast(W, p[base0 + j]);
      FloatVector y = FloatVector.broadcast(W, p[base1 + j]);
      int v = v0 + j * hd;
      FloatVector u = FloatVector.fromArray(W, values, v);
      o0 = x.fma(u, o0);
      n0 = y.fma(u, n0);
      u = FloatVector.fromArray(W, values, v + WL);
      o1 = x.fma(u, o1);
      n1 = y.fma(u, n1);
      u = FloatVector.fromArray(W, values, v + 2 * WL);
      o2 = x.fma(u, o2);
      n2 = y.fma(u, n2);
      u = FloatVector.fromArray(W, values, v + 3 * WL);
      o3 = x.fma(u, o3);
      n3 = y.fma(u, n3);
    }
    o0.intoArray(acc, a);
    o1.intoArray(acc, a + WL);
    o2.intoArray(acc, a + 2 * WL);
    o3.intoArray(acc, a + 3 * WL);
    n0.intoArray(acc, b);
    n1.intoArray(acc, b + WL);
    n2.intoArray(acc, b + 2 * WL);
    n3.intoArray(acc, b + 3 * WL);
  }
}
