import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * How fast a batch-1 Q4_0 matmul (one activation row, GEMV) written with the Vector API runs when
 * it reads a GGUF file's own blocks, beside ONNX Runtime's MatMulNBits on the same shapes
 * (bench/kernels/mlas_q4_bench.py; journal 2026-12-02b). A Q4_0 block is llama.cpp's: an fp16
 * scale d, then 16 bytes whose low nibbles are weights 0-15 and high nibbles weights 16-31, each
 * weight d * (q - 8). Rows of K weights lie one after another, K/32 blocks of 18 bytes each, as
 * in the file.
 *
 * <p>The kernel is the fastest of the forms tried (the journal lists the others): per block the
 * 16 code bytes are loaded once, the low nibbles taken with {@code & 15} and the high ones with a
 * 4-bit shift of the bytes read as 8 shorts (a byte-lane shift compiled to a much slower
 * sequence), both widened to 16 floats and multiplied into the activation's halves; the block's
 * vector is scaled by d into the row's accumulator, and the -8 is applied once per block as a
 * scalar, -8 * d * (the sum of the activation's 32 values), precomputed per block. Rows are split
 * over T threads. COPIES copies of the matrix are rotated so that the caches hold none of it
 * between calls (set COPIES=1 to measure in cache).
 *
 * <pre>java --add-modules jdk.incubator.vector bench/kernels/Q40Gemv.java K N T [CALLS]</pre>
 *
 * Prints the median and best time of a call, ns per block per thread, and the Q4_0 bytes read per
 * second. It first checks the kernel against a scalar dequantize-and-dot of the same blocks.
 */
public class Q40Gemv {
  static final VectorSpecies<Byte> B128 = ByteVector.SPECIES_128;
  static final VectorSpecies<Float> F512 = FloatVector.SPECIES_512;
  static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED;
  static final int BLOCK_BYTES = 18;

  public static void main(String[] args) throws Exception {
    int k = Integer.parseInt(args[0]);
    int n = Integer.parseInt(args[1]);
    int threads = Integer.parseInt(args[2]);
    int calls = args.length > 3 ? Integer.parseInt(args[3]) : 400;
    long matrixBytes = (long) n * (k / 32) * BLOCK_BYTES;
    int copies = Integer.getInteger("copies",
        Math.max(1, (int) Math.ceil(256e6 / matrixBytes)));
    copies = System.getenv("COPIES") != null ? Integer.parseInt(System.getenv("COPIES")) : copies;
    Random random = new Random(0);
    Arena arena = Arena.ofShared();
    MemorySegment[] matrices = new MemorySegment[copies];
    for (int c = 0; c < copies; c++) {
      matrices[c] = arena.allocate(matrixBytes, 64);
      fillQ40(matrices[c], n, k, random);
    }
    float[] x = new float[k];
    for (int i = 0; i < k; i++) {
      x[i] = (float) random.nextGaussian();
    }
    float[] y = new float[n];

    check(matrices[0], x, k, n);

    ExecutorService pool = Executors.newFixedThreadPool(threads);
    long[] times = new long[calls];
    for (int call = 0; call < calls; call++) {
      MemorySegment w = matrices[call % copies];
      long start = System.nanoTime();
      gemv(pool, threads, w, x, y, k, n);
      times[call] = System.nanoTime() - start;
    }
    pool.shutdown();
    // the second half: the JIT has compiled the kernel by then
    long[] steady = java.util.Arrays.copyOfRange(times, calls / 2, calls);
    java.util.Arrays.sort(steady);
    double medianUs = steady[steady.length / 2] / 1e3;
    double bestUs = steady[0] / 1e3;
    double blocksPerThread = (double) n * (k / 32) / threads;
    System.out.printf(
        "Q4_0 GEMV K=%d N=%d threads=%d copies=%d: median %.1f us (best %.1f), %.2f ns/block/thread,"
            + " %.1f GB/s of Q4_0 bytes%n",
        k, n, threads, copies, medianUs, bestUs, medianUs * 1e3 / blocksPerThread,
        matrixBytes / (medianUs * 1e3));
  }

  /** Random codes and scales of a plausible size (|d| ~ 0.01), as a quantizer would write them. */
  static void fillQ40(MemorySegment w, int n, int k, Random random) {
    byte[] codes = new byte[16];
    for (long b = 0, blocks = (long) n * (k / 32); b < blocks; b++) {
      long at = b * BLOCK_BYTES;
      w.set(SHORT, at, Float.floatToFloat16((float) (0.01 * (0.5 + random.nextDouble()))));
      random.nextBytes(codes);
      MemorySegment.copy(MemorySegment.ofArray(codes), 0, w, at + 2, 16);
    }
  }

  static void gemv(ExecutorService pool, int threads, MemorySegment w, float[] x, float[] y, int k,
      int n) throws Exception {
    float[] blockBias = blockSums(x, k);
    Future<?>[] parts = new Future<?>[threads];
    for (int t = 0; t < threads; t++) {
      int from = (int) ((long) n * t / threads);
      int to = (int) ((long) n * (t + 1) / threads);
      parts[t] = pool.submit(() -> rows(w, x, blockBias, y, k, from, to));
    }
    for (Future<?> part : parts) {
      part.get();
    }
  }

  /** -8 times the sum of each block of 32 activations: the offset of q - 8, applied per block. */
  static float[] blockSums(float[] x, int k) {
    float[] sums = new float[k / 32];
    for (int b = 0; b < sums.length; b++) {
      float s = 0;
      for (int i = 0; i < 32; i++) {
        s += x[b * 32 + i];
      }
      sums[b] = -8f * s;
    }
    return sums;
  }

  static void rows(MemorySegment w, float[] x, float[] blockBias, float[] y, int k, int from,
      int to) {
    int blocks = k / 32;
    long rowBytes = (long) blocks * BLOCK_BYTES;
    for (int row = from; row < to; row++) {
      long base = row * rowBytes;
      FloatVector acc = FloatVector.zero(F512);
      float bias = 0;
      for (int b = 0; b < blocks; b++) {
        long at = base + (long) b * BLOCK_BYTES;
        float d = Float.float16ToFloat(w.get(SHORT, at));
        ByteVector codes = ByteVector.fromMemorySegment(B128, w, at + 2, ByteOrder.LITTLE_ENDIAN);
        ByteVector low = codes.and((byte) 15);
        ByteVector high = codes.reinterpretAsShorts()
            .lanewise(VectorOperators.LSHR, 4)
            .reinterpretAsBytes()
            .and((byte) 15);
        FloatVector lowF = (FloatVector) low.convertShape(VectorOperators.B2F, F512, 0);
        FloatVector highF = (FloatVector) high.convertShape(VectorOperators.B2F, F512, 0);
        FloatVector block = lowF.mul(FloatVector.fromArray(F512, x, b * 32))
            .add(highF.mul(FloatVector.fromArray(F512, x, b * 32 + 16)));
        acc = block.fma(FloatVector.broadcast(F512, d), acc);
        bias += d * blockBias[b];
      }
      y[row] = acc.reduceLanes(VectorOperators.ADD) + bias;
    }
  }

  /** The kernel against a scalar dequantize-and-dot of the same blocks, on every row. */
  static void check(MemorySegment w, float[] x, int k, int n) {
    float[] y = new float[n];
    rows(w, x, blockSums(x, k), y, k, 0, n);
    int blocks = k / 32;
    for (int row = 0; row < n; row++) {
      double expected = 0;
      double scale = 0;
      for (int b = 0; b < blocks; b++) {
        long at = ((long) row * blocks + b) * BLOCK_BYTES;
        float d = Float.float16ToFloat(w.get(SHORT, at));
        for (int j = 0; j < 16; j++) {
          int code = w.get(ValueLayout.JAVA_BYTE, at + 2 + j) & 0xFF;
          expected += d * ((code & 15) - 8) * (double) x[b * 32 + j];
          expected += d * ((code >>> 4) - 8) * (double) x[b * 32 + 16 + j];
          scale += Math.abs(d * 8 * x[b * 32 + j]) + Math.abs(d * 8 * x[b * 32 + 16 + j]);
        }
      }
      if (Math.abs(y[row] - expected) > 1e-5 * scale) {
        throw new AssertionError("row " + row + ": " + y[row] + " against " + expected);
      }
    }
  }
}
