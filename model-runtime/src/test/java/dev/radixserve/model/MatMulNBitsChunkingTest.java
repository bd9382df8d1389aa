package dev.radixserve.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import dev.radixserve.model.graph.LinearGraph;
import dev.radixserve.model.ort.ElementType;
import dev.radixserve.model.ort.MemoryInfo;
import dev.radixserve.model.ort.OrtEnv;
import dev.radixserve.model.ort.OrtSession;
import dev.radixserve.model.ort.OrtValue;
import dev.radixserve.model.ort.SessionOptions;
import dev.radixserve.model.quant.QuantMode;
import dev.radixserve.model.quant.QuantSpec;
import dev.radixserve.model.quant.WeightLayout;
import dev.radixserve.model.weights.DType;
import dev.radixserve.model.weights.Tensor;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Every MatMulNBits form a model is served in gives a row the same bits however many rows the
 * call holds: one linear layer as {@link LinearGraph} emits it (ONNX Runtime's CPU kernel at the
 * CPU's {@code accuracy_level} 4, as served), 40 rows in one call against the same rows in 3, 5,
 * 7 and 40 calls (40: one row each, as a decode step), at 0 tolerance. The prefix cache needs
 * this of every weight: KV a request computed in its chunking is reused by another that would
 * have computed it in another (cache on ≡ off).
 *
 * <p>Measured on 2026-11-29 (ONNX Runtime 1.29.0, this machine's AVX-512 VNNI CPU): 4-bit blocks
 * of 64, 128 and 256 (with zero points and without) and 8-bit blocks of 128 gave the last row of
 * an odd call (a 13-row call's row 12) other bits, an ulp or two, and 4-bit blocks of 32 gave a
 * one-row call (a decode step) other bits than the same row among 40: the kernel computes rows
 * in pairs and an odd last row with another summation order. Those blocks are now given an even
 * row count ({@code QuantSpec.evenRows}, the graph's {@code EvenRows}), and hold with the rest;
 * 4-bit blocks of 16 and 8-bit blocks up to 64 hold without it.
 */
class MatMulNBitsChunkingTest {

  private static final int T = 40;
  private static final int N = 256;

  @ParameterizedTest(name = "{0}-bit, blocks of {1}, zero points {2}, K = {3}, {4} threads")
  @CsvSource({
      "4, 16, true, 1024, 1", "4, 16, true, 2048, 2", "8, 16, true, 2048, 2",
      "4, 32, true, 1024, 1", "4, 32, true, 1024, 2", "4, 32, true, 2048, 1",
      "4, 32, true, 2048, 2", "4, 32, true, 8192, 2", "4, 32, false, 1024, 1",
      "4, 32, false, 2048, 2", "8, 32, true, 1024, 1", "8, 32, true, 2048, 2",
      "8, 32, false, 2048, 2", "8, 64, false, 1024, 1", "8, 64, false, 2048, 2",
      "8, 64, true, 1024, 1", "8, 64, true, 2048, 2", "8, 64, true, 8192, 2",
      // padded to even rows (QuantSpec.evenRows): these failed before
      "4, 64, true, 1024, 1", "4, 64, true, 2048, 2", "4, 64, false, 2048, 2",
      "4, 64, true, 8192, 2", "4, 128, true, 1024, 1", "4, 128, true, 2048, 2",
      "4, 128, false, 2048, 1", "4, 128, true, 8192, 2", "4, 256, true, 2048, 2",
      "4, 256, false, 8192, 2", "8, 128, false, 2048, 2", "8, 128, true, 2048, 1",
      "8, 128, false, 8192, 2", "8, 256, false, 2048, 2"})
  void aRowGetsTheSameBitsInAnyChunking(int bits, int block, boolean zeroPoints, int k,
      int threads) {
    SplittableRandom r = new SplittableRandom(k * 131L + block * 7L + bits);
    float[] w = new float[N * k];
    for (int i = 0; i < w.length; i++) {
      w[i] = (float) (0.05 * (r.nextDouble() * 2 - 1));
    }
    float[] x = new float[T * k];
    for (int i = 0; i < x.length; i++) {
      x[i] = (float) (r.nextDouble() * 4 - 2);
    }
    long[] shape = {N, k};
    Map<String, Tensor> tensors = Map.of("w",
        new Tensor("w", DType.F32, shape, MemorySegment.ofArray(w)));
    QuantSpec spec = new QuantSpec(bits == 4 ? QuantMode.INT4 : QuantMode.INT8, block,
        zeroPoints, false, QuantSpec.CPU_ACCURACY_LEVEL);
    try (OrtEnv env = OrtEnv.create("chunking-test");
        MemoryInfo cpu = MemoryInfo.cpu();
        SessionOptions options = SessionOptions.create()) {
      options.intraOpThreads(threads);
      try (OrtSession session = WeightsFile.session(env,
              LinearGraph.build("w", WeightLayout.OUT_IN, shape, null, spec), tensors, options,
              WeightStore.temporary());
          OrtSession.Call call = session.call(List.of(LinearGraph.X), List.of(LinearGraph.Y))) {
        float[] whole = run(call, cpu, x, k, 0, T);
        for (int chunks : new int[] {3, 5, 7, T}) {
          for (int c = 0; c < chunks; c++) {
            int a = c * T / chunks;
            int b = (c + 1) * T / chunks;
            assertArrayEquals(Arrays.copyOfRange(whole, a * N, b * N),
                run(call, cpu, x, k, a, b), 0f,
                "rows " + a + ".." + b + " of " + T + " in " + chunks + " calls");
          }
        }
      }
    }
  }

  /** Rows {@code a..b} of {@code x} ([T, k]) through the layer in one call: [b − a, N]. */
  private static float[] run(OrtSession.Call call, MemoryInfo cpu, float[] x, int k, int a,
      int b) {
    try (Arena arena = Arena.ofConfined();
        OrtValue in = OrtValue.wrap(cpu, arena.allocateFrom(ValueLayout.JAVA_FLOAT,
            Arrays.copyOfRange(x, a * k, b * k)), ElementType.FLOAT, b - a, k)) {
      OrtValue out = call.run(in)[0];
      try {
        return out.data((long) (b - a) * N * Float.BYTES).toArray(ValueLayout.JAVA_FLOAT);
      } finally {
        out.close();
      }
    }
  }
}
