package dev.radixserve.model.quant;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.model.weights.DType;
import dev.radixserve.model.weights.Tensor;
import java.lang.foreign.MemorySegment;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

/**
 * The quantizer against a float64 reference of the MatMulNBits block format written from its
 * specification (scale, zero point, codes per block, independently of the Java float path), and
 * the packing against bytes worked out by hand.
 */
class BlockQuantizerTest {

  /** Weights K × N in {@code layout}: gaussian, a few outliers, one all-zero block. */
  static float[] weights(int k, int n, long seed) {
    SplittableRandom r = new SplittableRandom(seed);
    float[] w = new float[k * n];
    for (int i = 0; i < w.length; i++) {
      double u1 = r.nextDouble();
      double u2 = r.nextDouble();
      w[i] = (float) (0.02 * Math.sqrt(-2 * Math.log(1 - u1)) * Math.cos(2 * Math.PI * u2));
      if (r.nextInt(97) == 0) {
        w[i] *= 12; // outliers: they set their block's scale
      }
    }
    return w;
  }

  static Tensor tensor(String name, float[] values, long... shape) {
    return new Tensor(name, DType.F32, shape, MemorySegment.ofArray(values));
  }

  @ParameterizedTest(name = "{0} bits, block {1}, zero points {2}, {3}")
  @CsvSource({
      "4, 32, false, IN_OUT", "4, 32, true, IN_OUT", "4, 64, false, OUT_IN", "4, 64, true, OUT_IN",
      "8, 32, false, OUT_IN", "8, 32, true, OUT_IN", "8, 64, false, IN_OUT", "8, 64, true, IN_OUT",
      "4, 16, true, OUT_IN", "8, 128, false, IN_OUT"})
  void roundTripMatchesTheFloat64ReferenceOfTheFormat(int bits, int block, boolean zeroPoints,
      WeightLayout layout) {
    int k = 256;
    int n = 24;
    float[] kn = weights(k, n, bits * 1000L + block);
    for (int j = 0; j < block; j++) {
      kn[j * n + 5] = 0; // column 5's first block: all zeros (scale 0)
    }
    float[] stored = layout == WeightLayout.IN_OUT ? kn : transpose(kn, k, n);
    long[] shape = layout == WeightLayout.IN_OUT ? new long[] {k, n} : new long[] {n, k};
    QuantizedWeight q = BlockQuantizer.quantize(tensor("w", stored, shape), layout, bits, block,
        zeroPoints);

    assertEquals(k, q.k());
    assertEquals(n, q.n());
    if (!zeroPoints) {
      assertNull(q.zeroPoints());
    }
    int qmax = (1 << bits) - 1;
    int ties = 0;
    for (int col = 0; col < n; col++) {
      for (int b = 0; b < k / block; b++) {
        Reference ref = Reference.of(kn, n, col, b * block, block, bits, zeroPoints);
        float scale = q.scale(col, b);
        assertEquals(ref.scale, scale, Math.abs(ref.scale) * 1e-6, "scale of " + col + "/" + b);
        assertEquals(ref.zeroPoint, q.zeroPoint(col, b), "zero point of " + col + "/" + b);
        for (int j = 0; j < block; j++) {
          int kk = b * block + j;
          double w = kn[kk * n + col];
          int code = q.code(kk, col);
          assertTrue(code >= 0 && code <= qmax);
          double exact = ref.scale == 0 ? 0 : w / ref.scale + ref.zeroPoint;
          boolean nearTie = Math.abs(Math.abs(exact - Math.floor(exact)) - 0.5) < 1e-4;
          if (nearTie) {
            ties++;
            assertTrue(Math.abs(code - ref.codes[j]) <= 1, "code at a tie " + kk + "," + col);
          } else {
            assertEquals(ref.codes[j], code, "code of (" + kk + ", " + col + ")");
          }
          // the error bound of the format: half a step, a whole step at a clamped end
          double err = Math.abs(w - q.dequantized(kk, col));
          double bound = Math.abs(ref.scale) * (ref.clamped(j) ? 1.0 : 0.5) * (1 + 1e-5) + 1e-12;
          assertTrue(err <= bound, "error " + err + " > " + bound + " at (" + kk + ", " + col + ")");
        }
      }
    }
    assertTrue(ties < k * n / 1000 + 2, "too many ties to be a fair test: " + ties);
  }

  @Test
  void packsFourBitCodesLowNibbleFirstAndZeroPointsTheSameWay() {
    // K = 32 (one block), N = 1; with zero points: lo = -1.5, hi = 6, scale = 7.5 / 15 = 0.5,
    // zp = round(3) = 3, code = round(w / 0.5) + 3
    float[] w = new float[32];
    w[0] = -1.5f; // code 0
    w[1] = 6f; // code 15
    w[2] = 1f; // code 5
    w[3] = 0.5f; // code 4
    QuantizedWeight q = BlockQuantizer.quantize(tensor("w", w, 32, 1), WeightLayout.IN_OUT, 4, 32,
        true);
    assertEquals(0.5f, q.scales()[0]);
    assertEquals(16, q.packed().length);
    assertEquals((byte) (0 | 15 << 4), q.packed()[0]);
    assertEquals((byte) (5 | 4 << 4), q.packed()[1]);
    assertEquals((byte) (3 | 3 << 4), q.packed()[2]); // zeros sit on the zero point
    assertEquals(1, q.zeroPoints().length);
    assertEquals(3, q.zeroPoints()[0]);
  }

  @Test
  void symmetricPutsTheExtremeOnCodeZeroWithTheDefaultZeroPoint() {
    float[] w = new float[32];
    w[0] = 0.8f; // the largest magnitude: scale = 0.8 / -8 = -0.1, code 0
    w[1] = -0.3f; // -0.3 / -0.1 + 8 = 11
    w[2] = -0.78f; // 15.8 rounds to 16, clamped to 15: the end a symmetric block cannot reach
    QuantizedWeight q = BlockQuantizer.quantize(tensor("w", w, 1, 32), WeightLayout.OUT_IN, 4, 32,
        false);
    assertEquals(-0.1f, q.scales()[0], 1e-7);
    assertEquals(0, q.code(0, 0));
    assertEquals(11, q.code(1, 0));
    assertEquals(15, q.code(2, 0));
    assertEquals(8, q.code(3, 0));
    assertEquals(8, q.zeroPoint(0, 0));
  }

  @Test
  void quantizesBf16CheckpointsFromTheirOwnValues() {
    float[] w = weights(64, 8, 7);
    short[] bf16 = new short[w.length];
    float[] widened = new float[w.length];
    for (int i = 0; i < w.length; i++) {
      bf16[i] = (short) (Float.floatToIntBits(w[i]) >>> 16);
      widened[i] = Float.intBitsToFloat(bf16[i] << 16);
    }
    Tensor t = new Tensor("w", DType.BF16, new long[] {64, 8}, MemorySegment.ofArray(bf16));
    QuantizedWeight fromBf16 = BlockQuantizer.quantize(t, WeightLayout.IN_OUT, 8, 32, false);
    QuantizedWeight fromF32 = BlockQuantizer.quantize(tensor("w", widened, 64, 8),
        WeightLayout.IN_OUT, 8, 32, false);
    assertEquals(java.util.Arrays.toString(fromF32.packed()),
        java.util.Arrays.toString(fromBf16.packed()));
    assertEquals(java.util.Arrays.toString(fromF32.scales()),
        java.util.Arrays.toString(fromBf16.scales()));
  }

  @Test
  void refusesABlockThatDoesNotDivideK() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> BlockQuantizer.quantize(tensor("h.0.mlp.c_fc.weight", new float[48 * 2], 48, 2),
            WeightLayout.IN_OUT, 4, 32, false));
    assertTrue(e.getMessage().contains("h.0.mlp.c_fc.weight") && e.getMessage().contains("48"),
        e.getMessage());
  }

  static float[] transpose(float[] kn, int k, int n) {
    float[] nk = new float[kn.length];
    for (int kk = 0; kk < k; kk++) {
      for (int col = 0; col < n; col++) {
        nk[col * k + kk] = kn[kk * n + col];
      }
    }
    return nk;
  }

  /** One block quantized in float64 from the format's definition. */
  record Reference(double scale, int zeroPoint, int[] codes, double[] exact, int qmax) {

    static Reference of(float[] kn, int n, int col, int k0, int block, int bits,
        boolean zeroPoints) {
      double[] v = new double[block];
      double lo = 0;
      double hi = 0;
      for (int j = 0; j < block; j++) {
        v[j] = kn[(k0 + j) * n + col];
        lo = Math.min(lo, v[j]);
        hi = Math.max(hi, v[j]);
      }
      int qmax = (1 << bits) - 1;
      double scale;
      int zp;
      if (zeroPoints) {
        scale = (hi - lo) / qmax;
        zp = scale == 0 ? 0 : (int) Math.max(0, Math.min(qmax, roundAway(-lo / scale)));
      } else {
        double extreme = Math.abs(hi) > Math.abs(lo) ? hi : lo;
        zp = 1 << (bits - 1);
        scale = extreme / -zp;
      }
      scale = (float) scale; // the format stores it as float; codes follow the stored scale
      int[] codes = new int[block];
      double[] exact = new double[block];
      for (int j = 0; j < block; j++) {
        exact[j] = scale == 0 ? zp : v[j] / scale + zp;
        codes[j] = (int) Math.max(0, Math.min(qmax, roundAway(exact[j])));
      }
      return new Reference(scale, zp, codes, exact, qmax);
    }

    boolean clamped(int j) {
      return exact[j] > qmax + 0.5 || exact[j] < -0.5;
    }

    static double roundAway(double x) {
      return Math.copySign(Math.floor(Math.abs(x) + 0.5), x);
    }
  }
}
