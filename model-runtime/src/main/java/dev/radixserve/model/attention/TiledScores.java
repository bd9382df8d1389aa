package dev.radixserve.model.attention;

import static dev.radixserve.model.attention.VectorRowAttention.L;
import static dev.radixserve.model.attention.VectorRowAttention.SP;

import dev.radixserve.model.attention.RowAttention.QueryRun;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorShuffle;

/**
 * The scores of a multi-query run, two query rows by four key rows at a time, with each (row,
 * position) pair's operations those of {@link VectorRowAttention#dot} (or {@link
 * VectorRowAttention#dot8} for a head of 8 vectors), in its order, so that a token's score has
 * a decode step's bits. 256-bit vectors only (the 128-bit path keeps the per-pair loops; on
 * AVX-512, {@link WideTiles} takes the tiles with the same bits).
 *
 * <pre>
 *   for each pair of vectors d of the head:  x = q_t[d], y = q_t+1[d], u.. = k_j..j+3[d]
 *     a_t,j += x * u   a_t+1,j += y * u   ...  (8 chains: even vectors in a, odd ones in c, as dot)
 *   then the 8 pairs' a + c summed by one tree: StableLanes.sum's additions, 7 shuffles for 8
 *   sums instead of 24. Float addition is commutative bit for bit, so a level can add the halves
 *   of two vectors at once:
 *     x = a.blend(b, HI) = [a_lo b_hi]    y = b.blend(a, HI) = [b_lo a_hi]
 *     x + rotate_half(y) = [a_lo + a_hi, b_hi + b_lo]       (the first level of both trees)
 *   then quarters inside each half (ab with cd), then adjacent lanes (abcd with efgh): lanes
 *   hold row t's positions j .. j + 3, then row t + 1's.
 * </pre>
 *
 * Why: a dot of one query row and one key row loads two vectors per fma, and its lane sum costs
 * three shuffles per score; here six loads feed eight fmas and a score costs under one shuffle.
 * Prefill attention at long context is mostly these dots (a 32k-token prompt of the 8B shape:
 * docs/benchmarks/journal/2026-11-28c-memory-8b.md). Without a soft cap the sums are scaled and
 * stored as vectors (masked stores: each row's half where it belongs) and the maxima kept as a
 * vector; with one, lane by lane through {@link ScoreRule#cap}.
 *
 * <p>Rows t and t + 1 share all positions but the causal edge (row t + 1 sees one more) and,
 * with a window, its start (row t sees one more): those positions, and the last ones of a range
 * that are not a whole tile, go one row at a time ({@link #row}). No vector crosses a call (the
 * sum trees are written out): C2 boxed the vectors it passed to StableLanes' sum from here.
 */
final class TiledScores {

  // The tree's masks and rotations, static final for StableLanes' reason
  private static final VectorMask<Float> HI = VectorMask.fromLong(SP, 0xF0);
  private static final VectorMask<Float> QUARTER = VectorMask.fromLong(SP, 0xCC);
  private static final VectorMask<Float> ODD = VectorMask.fromLong(SP, 0xAA);
  private static final VectorMask<Float> LOW = HI.not();
  private static final VectorShuffle<Float> ROT_HALF = StableLanes.ROT256_4;
  private static final VectorShuffle<Float> ROT_QUARTER =
      VectorShuffle.fromOp(SP, i -> (i & ~3) | ((i + 2) & 3)); // by 2 inside each half
  private static final VectorShuffle<Float> SWAP = VectorShuffle.fromOp(SP, i -> i ^ 1);
  private static final VectorShuffle<Float> ROT_QUARTER_ALL = StableLanes.ROT256_2;
  private static final VectorShuffle<Float> ROT_ONE = StableLanes.ROT256_1;

  private TiledScores() {}

  /** Whether a head of this size is whole pairs of vectors, as the tiles read it. */
  static boolean fits(int headSize) {
    return L == 8 && headSize % (2 * L) == 0;
  }

  /**
   * Scores of every row of the run that sees positions [j0, end) (whole blocks, a span of them
   * per call so that a call's setup is paid once for several); the rows' maxima raised to them. {@code queries}: the run's rows (row r = head i × queries + query t at
   * {@code r * headSize}); {@code keys}: the span's key rows for the run's kv head, fp32,
   * position j at {@code (j - j0) * headSize}. Heap arrays, not the pool's segments: a segment
   * load's bounds check is on a long offset, and C2 set up its range-check elimination anew for
   * every tile (hundreds of instructions before a 16-fma loop); array loads cost 2x less here.
   */
  static void span(QueryRun run, float[] queries, float[] keys, int j0, int end, float[] scores,
      float[] max) {
    int n = run.queries();
    int w = run.width();
    int hd = run.headSize();
    int k0 = -j0 * hd;
    for (int i = 0; i < run.heads(); i++) {
      for (int t = Math.max(0, j0 - run.firstLen() + 1); t < n; t += 2) {
        int b0 = Math.max(j0, run.from(t));
        if (b0 >= end) {
          break; // this row's window starts after the block, and so do the later rows'
        }
        int e0 = Math.min(end, run.firstLen() + t);
        int r0 = i * n + t;
        if (t + 1 == n) {
          row(run, queries, r0 * hd, keys, k0, b0, e0, scores, r0 * w - run.lo(), max, r0);
          break;
        }
        int b1 = Math.max(j0, run.from(t + 1));
        int e1 = Math.min(end, run.firstLen() + t + 1);
        // row t alone before row t + 1's window starts, both where both see, row t + 1 alone after
        row(run, queries, r0 * hd, keys, k0, b0, Math.min(b1, e0), scores, r0 * w - run.lo(),
            max, r0);
        if (b1 < e0) {
          pairs(run, queries, r0 * hd, keys, k0, b1, e0, scores, r0 * w - run.lo(), max, r0);
        }
        row(run, queries, (r0 + 1) * hd, keys, k0, Math.max(b1, e0), e1, scores,
            (r0 + 1) * w - run.lo(), max, r0 + 1);
      }
    }
  }

  /**
   * Row r's scores for positions [from, to), one at a time: {@link VectorRowAttention#dot8}'s or
   * {@link VectorRowAttention#dot}'s operations on arrays (whole pairs of vectors, no tail).
   */
  static void row(QueryRun run, float[] queries, int q, float[] keys, int k0, int from,
      int to, float[] scores, int base, float[] max, int r) {
    if (WideTiles.ON) {
      WideTiles.scoreRow(run, queries, q, keys, k0, from, to, scores, base, max, r);
      return;
    }
    int hd = run.headSize();
    boolean eight = hd == 8 * L;
    float m = max[r];
    FloatVector zero = FloatVector.zero(SP);
    for (int j = from; j < to; j++) {
      int k = k0 + j * hd;
      FloatVector x = FloatVector.fromArray(SP, queries, q);
      FloatVector u = FloatVector.fromArray(SP, keys, k);
      FloatVector a = eight ? x.mul(u) : x.fma(u, zero);
      x = FloatVector.fromArray(SP, queries, q + L);
      u = FloatVector.fromArray(SP, keys, k + L);
      FloatVector c = eight ? x.mul(u) : x.fma(u, zero);
      for (int e = 2 * L; e < hd; e += 2 * L) {
        a = FloatVector.fromArray(SP, queries, q + e).fma(FloatVector.fromArray(SP, keys, k + e),
            a);
        c = FloatVector.fromArray(SP, queries, q + e + L)
            .fma(FloatVector.fromArray(SP, keys, k + e + L), c);
      }
      // StableLanes.sum written out: row is inlined into pairs, and there C2 left sum out of
      // line and boxed the vector it was given
      FloatVector v = a.add(c);
      v = v.add(v.rearrange(ROT_HALF));
      v = v.add(v.rearrange(ROT_QUARTER_ALL));
      float s = run.rule().cap(v.add(v.rearrange(ROT_ONE)).lane(0) * run.scale());
      scores[base + j] = s;
      m = Math.max(m, s);
    }
    max[r] = m;
  }

  /**
   * Rows r and r + 1 (queries at q0 and q0 + headSize) for positions [from, to): four positions
   * at a time, the last ones through {@link #row}.
   */
  static void pairs(QueryRun run, float[] queries, int q0, float[] keys, int k0,
      int from, int to, float[] scores, int base0, float[] max, int r) {
    if (WideTiles.ON && WideTiles.holdsQueries(run.headSize())) {
      WideTiles.scorePairs(run, queries, q0, keys, k0, from, to, scores, base0, max, r);
      return;
    }
    int hd = run.headSize();
    int q1 = q0 + hd;
    int base1 = base0 + run.width();
    // dot8 starts its chains with a product, dot with an fma onto zero: their -0 differs
    boolean eight = hd == 8 * L;
    float scale = run.scale();
    ScoreRule rule = run.rule();
    float m0 = max[r];
    float m1 = max[r + 1];
    FloatVector zero = FloatVector.zero(SP);
    FloatVector maxima = FloatVector.broadcast(SP, Float.NEGATIVE_INFINITY);
    boolean capped = rule.softcap() != 0f;
    int j = from;
    for (; j + 3 < to; j += 4) {
      int k = k0 + j * hd;
      int kv = k + hd;
      int kw = k + 2 * hd;
      int kx = k + 3 * hd;
      FloatVector x = FloatVector.fromArray(SP, queries, q0);
      FloatVector y = FloatVector.fromArray(SP, queries, q1);
      FloatVector u = FloatVector.fromArray(SP, keys, k);
      FloatVector v = FloatVector.fromArray(SP, keys, kv);
      FloatVector uu = FloatVector.fromArray(SP, keys, kw);
      FloatVector vv = FloatVector.fromArray(SP, keys, kx);
      // a<row><position>: even vectors; c: odd ones
      FloatVector a00 = eight ? x.mul(u) : x.fma(u, zero);
      FloatVector a10 = eight ? y.mul(u) : y.fma(u, zero);
      FloatVector a01 = eight ? x.mul(v) : x.fma(v, zero);
      FloatVector a11 = eight ? y.mul(v) : y.fma(v, zero);
      FloatVector a02 = eight ? x.mul(uu) : x.fma(uu, zero);
      FloatVector a12 = eight ? y.mul(uu) : y.fma(uu, zero);
      FloatVector a03 = eight ? x.mul(vv) : x.fma(vv, zero);
      FloatVector a13 = eight ? y.mul(vv) : y.fma(vv, zero);
      x = FloatVector.fromArray(SP, queries, q0 + L);
      y = FloatVector.fromArray(SP, queries, q1 + L);
      u = FloatVector.fromArray(SP, keys, k + L);
      v = FloatVector.fromArray(SP, keys, kv + L);
      uu = FloatVector.fromArray(SP, keys, kw + L);
      vv = FloatVector.fromArray(SP, keys, kx + L);
      FloatVector c00 = eight ? x.mul(u) : x.fma(u, zero);
      FloatVector c10 = eight ? y.mul(u) : y.fma(u, zero);
      FloatVector c01 = eight ? x.mul(v) : x.fma(v, zero);
      FloatVector c11 = eight ? y.mul(v) : y.fma(v, zero);
      FloatVector c02 = eight ? x.mul(uu) : x.fma(uu, zero);
      FloatVector c12 = eight ? y.mul(uu) : y.fma(uu, zero);
      FloatVector c03 = eight ? x.mul(vv) : x.fma(vv, zero);
      FloatVector c13 = eight ? y.mul(vv) : y.fma(vv, zero);
      for (int e = 2 * L; e < hd; e += 2 * L) {
        x = FloatVector.fromArray(SP, queries, q0 + e);
        y = FloatVector.fromArray(SP, queries, q1 + e);
        u = FloatVector.fromArray(SP, keys, k + e);
        v = FloatVector.fromArray(SP, keys, kv + e);
        uu = FloatVector.fromArray(SP, keys, kw + e);
        vv = FloatVector.fromArray(SP, keys, kx + e);
        a00 = x.fma(u, a00);
        a10 = y.fma(u, a10);
        a01 = x.fma(v, a01);
        a11 = y.fma(v, a11);
        a02 = x.fma(uu, a02);
        a12 = y.fma(uu, a12);
        a03 = x.fma(vv, a03);
        a13 = y.fma(vv, a13);
        int f = e + L;
        x = FloatVector.fromArray(SP, queries, q0 + f);
        y = FloatVector.fromArray(SP, queries, q1 + f);
        u = FloatVector.fromArray(SP, keys, k + f);
        v = FloatVector.fromArray(SP, keys, kv + f);
        uu = FloatVector.fromArray(SP, keys, kw + f);
        vv = FloatVector.fromArray(SP, keys, kx + f);
        c00 = x.fma(u, c00);
        c10 = y.fma(u, c10);
        c01 = x.fma(v, c01);
        c11 = y.fma(v, c11);
        c02 = x.fma(uu, c02);
        c12 = y.fma(uu, c12);
        c03 = x.fma(vv, c03);
        c13 = y.fma(vv, c13);
      }
      // the tree (class comment), written out
      FloatVector a = a00.add(c00);
      FloatVector b = a10.add(c10);
      FloatVector ab = a.blend(b, HI).add(b.blend(a, HI).rearrange(ROT_HALF));
      a = a02.add(c02);
      b = a12.add(c12);
      FloatVector cd = a.blend(b, HI).add(b.blend(a, HI).rearrange(ROT_HALF));
      a = a01.add(c01);
      b = a11.add(c11);
      FloatVector ef = a.blend(b, HI).add(b.blend(a, HI).rearrange(ROT_HALF));
      a = a03.add(c03);
      b = a13.add(c13);
      FloatVector gh = a.blend(b, HI).add(b.blend(a, HI).rearrange(ROT_HALF));
      FloatVector abcd = ab.blend(cd, QUARTER).add(cd.blend(ab, QUARTER).rearrange(ROT_QUARTER));
      FloatVector efgh = ef.blend(gh, QUARTER).add(gh.blend(ef, QUARTER).rearrange(ROT_QUARTER));
      // lanes: row t's positions j .. j + 3, then row t + 1's
      FloatVector sums =
          abcd.blend(efgh, ODD).add(efgh.blend(abcd, ODD).rearrange(SWAP)).mul(scale);
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
        // each row's half where it belongs (masked stores: nothing else is written)
        sums.intoArray(scores, base0 + j, LOW);
        sums.intoArray(scores, base1 + j - 4, HI);
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
      row(run, queries, q0, keys, k0, j, to, scores, base0, max, r);
      row(run, queries, q1, keys, k0, j, to, scores, base1, max, r + 1);
    }
  }
}
