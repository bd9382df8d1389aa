import jdk.incubator.vector.*;
import java.lang.foreign.*;
import java.nio.ByteOrder;
import java.util.concurrent.*;

/**
 * How fast an int8 matmul written with the Vector API runs, beside ONNX Runtime's MatMulNBits
 * (journal 2026-11-30b, section 5): N rows of K int8 weights with one fp32 scale per 32 (a Q8_0
 * layout with the scale widened), M activation rows, columns split over T threads. Each weight
 * vector is widened to fp32 and multiplied into every row's accumulator (fma); the block's sum is
 * scaled once. Eight copies of the matrix are rotated so that the caches do not hold it.
 *
 * <pre>java --add-modules jdk.incubator.vector bench/kernels/JavaInt8Matmul.java N K T</pre>
 *
 * Prints, for M = 1, 2, 4, 8, 40, the mean and best of the last 100 of 200 calls, GFLOP/s and the
 * weight bytes read per second (at 1.125 bytes a weight).
 */
public class JavaInt8Matmul {
  static final VectorSpecies<Float> F = FloatVector.SPECIES_256;
  static final VectorSpecies<Byte> B64 = ByteVector.SPECIES_64;
  static final ValueLayout.OfFloat FL = ValueLayout.JAVA_FLOAT_UNALIGNED;
  // weights: N rows of K int8; scales: N * K/32 floats
  static MemorySegment w, s; static int N, K;
  static float[][] x; static float[][] y;

  // columns [n0,n1) for M rows
  static void kernel(int M, int n0, int n1) {
    int blocks = K / 32;
    if (M == 1) {
      float[] x0 = x[0];
      for (int n = n0; n < n1; n++) {
        long wb = (long) n * K; long sb = (long) n * blocks * 4;
        FloatVector acc = FloatVector.zero(F);
        for (int b = 0; b < blocks; b++) {
          int k = b * 32;
          FloatVector p = FloatVector.zero(F);
          for (int j = 0; j < 4; j++) {
            FloatVector wv = (FloatVector) ByteVector.fromMemorySegment(B64, w, wb + k + j * 8, ByteOrder.nativeOrder()).convertShape(VectorOperators.B2F, F, 0);
            p = wv.fma(FloatVector.fromArray(F, x0, k + j * 8), p);
          }
          acc = p.fma(FloatVector.broadcast(F, s.get(FL, sb + b * 4L)), acc);
        }
        y[0][n] = acc.reduceLanes(VectorOperators.ADD);
      }
      return;
    }
    for (int r = 0; r < M; r += 4) {
      int rows = Math.min(4, M - r);
      float[] x0 = x[r], x1 = x[Math.min(r + 1, M - 1)], x2 = x[Math.min(r + 2, M - 1)], x3 = x[Math.min(r + 3, M - 1)];
      for (int n = n0; n < n1; n++) {
        long wb = (long) n * K; long sb = (long) n * blocks * 4;
        FloatVector a0 = FloatVector.zero(F), a1 = a0, a2 = a0, a3 = a0;
        for (int b = 0; b < blocks; b++) {
          int k = b * 32;
          FloatVector p0 = FloatVector.zero(F), p1 = p0, p2 = p0, p3 = p0;
          for (int j = 0; j < 4; j++) {
            int kk = k + j * 8;
            FloatVector wv = (FloatVector) ByteVector.fromMemorySegment(B64, w, wb + kk, ByteOrder.nativeOrder()).convertShape(VectorOperators.B2F, F, 0);
            p0 = wv.fma(FloatVector.fromArray(F, x0, kk), p0);
            p1 = wv.fma(FloatVector.fromArray(F, x1, kk), p1);
            p2 = wv.fma(FloatVector.fromArray(F, x2, kk), p2);
            p3 = wv.fma(FloatVector.fromArray(F, x3, kk), p3);
          }
          FloatVector sc = FloatVector.broadcast(F, s.get(FL, sb + b * 4L));
          a0 = p0.fma(sc, a0); a1 = p1.fma(sc, a1); a2 = p2.fma(sc, a2); a3 = p3.fma(sc, a3);
        }
        y[r][n] = a0.reduceLanes(VectorOperators.ADD);
        if (rows > 1) y[r + 1][n] = a1.reduceLanes(VectorOperators.ADD);
        if (rows > 2) y[r + 2][n] = a2.reduceLanes(VectorOperators.ADD);
        if (rows > 3) y[r + 3][n] = a3.reduceLanes(VectorOperators.ADD);
      }
    }
  }

  public static void main(String[] a) throws Exception {
    N = Integer.parseInt(a[0]); K = Integer.parseInt(a[1]); int T = Integer.parseInt(a[2]);
    int copies = 8; // rotate over several matrices so that caches do not hold them (32 MiB L3)
    MemorySegment[] ws = new MemorySegment[copies], ss = new MemorySegment[copies];
    Arena ar = Arena.global();
    java.util.Random rnd = new java.util.Random(1);
    for (int c = 0; c < copies; c++) {
      ws[c] = ar.allocate((long) N * K, 64); ss[c] = ar.allocate((long) N * K / 32 * 4, 64);
      for (long i = 0; i < (long) N * K; i += 8) ws[c].set(ValueLayout.JAVA_LONG_UNALIGNED, i, rnd.nextLong());
      for (long i = 0; i < (long) N * K / 32; i++) ss[c].set(FL, i * 4, rnd.nextFloat());
    }
    ExecutorService ex = Executors.newFixedThreadPool(T);
    for (int M : new int[]{1, 2, 4, 8, 40}) {
      x = new float[M][K]; y = new float[M][N];
      for (float[] r : x) for (int i = 0; i < K; i++) r[i] = rnd.nextFloat();
      long best = Long.MAX_VALUE; long sum = 0; int reps = 200;
      for (int rep = 0; rep < reps; rep++) {
        w = ws[rep % copies]; s = ss[rep % copies];
        final int MM = M;
        long t0 = System.nanoTime();
        Future<?>[] f = new Future<?>[T];
        for (int t = 0; t < T; t++) { int tt = t; f[t] = ex.submit(() -> kernel(MM, N * tt / T, N * (tt + 1) / T)); }
        for (Future<?> q : f) q.get();
        long d = System.nanoTime() - t0;
        if (rep >= reps / 2) { best = Math.min(best, d); sum += d; }
      }
      double med = sum / (reps / 2) / 1e6;
      System.out.printf("M=%d mean %.3f ms best %.3f ms  %.1f GFLOP/s  %.1f GB/s%n", M, med, best / 1e6, 2.0 * N * K * M / (med * 1e6), (N * (double) K * 1.125) / (med * 1e6));
    }
    ex.shutdown();
  }
}
