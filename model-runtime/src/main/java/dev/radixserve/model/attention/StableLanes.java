package dev.radixserve.model.attention;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

/**
 * The two Vector API operations the attention needs beyond lane-wise arithmetic, written so that
 * they give the same bits whether the JIT has compiled the caller or not.
 *
 * <p>Why: {@code reduceLanes(ADD)} on floats adds the lanes in order when interpreted or in C1,
 * but in any order once C2 compiles it; and {@code lanewise(EXP)} is {@code Math.exp} per lane
 * when interpreted but Intel's SVML in C2. Either way the same step gave different logits before
 * and after the kernel warmed up (a server test comparing two requests' prompt logprobs failed on
 * a 1-ulp difference). Lane-wise add, multiply, fma, shuffles and conversions are exact in every
 * tier, so a fixed addition tree and a polynomial {@code exp} built from them are stable. Each
 * has a scalar twin that computes the same bits, for loop tails and for tests.
 */
final class StableLanes {

  private StableLanes() {}

  // The shuffles are static final so that C2 sees them as constants (an index vector loaded once
  // per loop); from an array or an instance field it rebuilt and checked them on every call.
  // Package-private: TiledScores writes the same tree out.
  private static final VectorSpecies<Float> S256 = FloatVector.SPECIES_256;
  static final VectorShuffle<Float> ROT256_4 = rotation(S256, 4);
  static final VectorShuffle<Float> ROT256_2 = rotation(S256, 2);
  static final VectorShuffle<Float> ROT256_1 = rotation(S256, 1);
  private static final VectorSpecies<Float> S128 = FloatVector.SPECIES_128;
  private static final VectorShuffle<Float> ROT128_2 = rotation(S128, 2);
  private static final VectorShuffle<Float> ROT128_1 = rotation(S128, 1);

  /** Lane i takes lane (i + w) mod L. */
  private static VectorShuffle<Float> rotation(VectorSpecies<Float> species, int w) {
    return VectorShuffle.fromOp(species, i -> (i + w) % species.length());
  }

  /**
   * The sum of the lanes as a balanced tree: pairs (i, i + L/2) first, then (i, i + L/4), ...
   * For 8 lanes: ((a0+a4)+(a2+a6)) + ((a1+a5)+(a3+a7)). Vectors of 4 or 8 lanes (the kernel caps
   * them at 256 bits).
   */
  static float sum(FloatVector v) {
    if (v.length() == 8) {
      v = v.add(v.rearrange(ROT256_4));
      v = v.add(v.rearrange(ROT256_2));
      return v.add(v.rearrange(ROT256_1)).lane(0);
    }
    if (v.length() == 4) {
      v = v.add(v.rearrange(ROT128_2));
      return v.add(v.rearrange(ROT128_1)).lane(0);
    }
    throw new IllegalArgumentException("a vector of " + v.length() + " lanes");
  }

  /** The scalar twin of {@link #sum(FloatVector)}: the same additions in the same order. */
  static float sum(float[] lanes) {
    float[] v = lanes.clone();
    for (int w = v.length / 2; w >= 1; w /= 2) {
      float[] next = new float[v.length];
      for (int i = 0; i < v.length; i++) {
        next[i] = v[i] + v[(i + w) % v.length];
      }
      v = next;
    }
    return v[0];
  }

  // exp(x) = 2^n * e^r with n = round(x / ln 2), r = x - n ln 2 (ln 2 in two parts so that
  // n * LN2_HI is exact), e^r by a degree-6 polynomial on |r| <= ln2/2 (Cephes' expf: within
  // 2 ulp of the true value). Inputs are clamped to [LOWEST, HIGHEST] so that 2^n stays a normal
  // float: below, exp(LOWEST) ~ 1.2e-38 stands for 0; above 88 (never, in a softmax) e^88.
  private static final float LOG2E = 1.44269504088896341f;
  private static final float LN2_HI = 0.693359375f;
  private static final float LN2_LO = -2.12194440e-4f;
  private static final float LOWEST = -87.33654f;
  private static final float HIGHEST = 88f;
  /** 1.5 * 2^23: adding and subtracting it rounds a float below 2^22 to an integer. */
  private static final float ROUND = 12582912f;
  private static final float P0 = 1.9875691500e-4f;
  private static final float P1 = 1.3981999507e-3f;
  private static final float P2 = 8.3334519073e-3f;
  private static final float P3 = 4.1665795894e-2f;
  private static final float P4 = 1.6666665459e-1f;
  private static final float P5 = 5.0000001201e-1f;

  /** e^x per lane (NaN stays NaN: min and max propagate it, as Math.min and Math.max do). */
  static FloatVector exp(FloatVector x) {
    VectorSpecies<Float> sp = x.species();
    FloatVector c = x.max(LOWEST).min(HIGHEST);
    FloatVector n = c.fma(FloatVector.broadcast(sp, LOG2E), FloatVector.broadcast(sp, ROUND))
        .sub(ROUND);
    FloatVector r = n.fma(FloatVector.broadcast(sp, -LN2_HI), c);
    r = n.fma(FloatVector.broadcast(sp, -LN2_LO), r);
    FloatVector p = r.fma(FloatVector.broadcast(sp, P0), FloatVector.broadcast(sp, P1));
    p = p.fma(r, FloatVector.broadcast(sp, P2));
    p = p.fma(r, FloatVector.broadcast(sp, P3));
    p = p.fma(r, FloatVector.broadcast(sp, P4));
    p = p.fma(r, FloatVector.broadcast(sp, P5));
    FloatVector y = p.fma(r.mul(r), r).add(1f);
    IntVector bits = ((IntVector) n.convert(VectorOperators.F2I, 0)).add(127)
        .lanewise(VectorOperators.LSHL, 23);
    return y.mul(bits.reinterpretAsFloats());
  }

  /** The scalar twin of {@link #exp(FloatVector)}: the same operations on one float. */
  static float exp(float x) {
    float c = Math.min(Math.max(x, LOWEST), HIGHEST);
    float n = Math.fma(c, LOG2E, ROUND) - ROUND;
    float r = Math.fma(n, -LN2_HI, c);
    r = Math.fma(n, -LN2_LO, r);
    float p = Math.fma(r, P0, P1);
    p = Math.fma(p, r, P2);
    p = Math.fma(p, r, P3);
    p = Math.fma(p, r, P4);
    p = Math.fma(p, r, P5);
    float y = Math.fma(p, r * r, r) + 1f;
    return y * Float.intBitsToFloat(((int) n + 127) << 23);
  }
}
