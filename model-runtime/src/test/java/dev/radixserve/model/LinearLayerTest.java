package dev.radixserve.model;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.model.graph.LinearGraph;
import dev.radixserve.model.graph.OnnxGraph;
import dev.radixserve.model.ort.ElementType;
import dev.radixserve.model.ort.MemoryInfo;
import dev.radixserve.model.ort.OrtEnv;
import dev.radixserve.model.ort.OrtSession;
import dev.radixserve.model.ort.OrtValue;
import dev.radixserve.model.ort.SessionOptions;
import dev.radixserve.model.quant.BlockQuantizer;
import dev.radixserve.model.quant.QuantMode;
import dev.radixserve.model.quant.QuantSpec;
import dev.radixserve.model.quant.QuantizedWeight;
import dev.radixserve.model.quant.WeightLayout;
import dev.radixserve.model.weights.DType;
import dev.radixserve.model.weights.Tensor;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * One linear layer as ONNX Runtime runs it with {@code com.microsoft.MatMulNBits} (through the
 * same {@code Linear} emitter and weight path as the model), against the same layer in fp32:
 * <ul>
 *   <li>against x·W in fp32 within the format's error bound, Σ_k |x_k|·|scale(n, k)| (a weight
 *       is off by at most one step), plus the int8 rounding of x at accuracy level 4;
 *   <li>against x·Ŵ in float64, Ŵ dequantized from the bytes we wrote, to float accuracy: ONNX
 *       Runtime reads the packing exactly as the quantizer meant it.
 * </ul>
 */
class LinearLayerTest {

  private static final int T = 5;

  @ParameterizedTest(name = "{0}, block {1}, zero points {2}, {3}, accuracy_level {4}")
  @CsvSource({
      "INT4, 32, false, IN_OUT, 0", "INT4, 32, true, IN_OUT, 4", "INT4, 64, false, OUT_IN, 4",
      "INT4, 64, true, OUT_IN, 0", "INT8, 32, false, OUT_IN, 0", "INT8, 32, true, IN_OUT, 4",
      "INT8, 64, false, IN_OUT, 4", "INT8, 64, true, OUT_IN, 0"})
  void matMulNBitsMatchesTheFp32LayerWithinTheFormatsBound(QuantMode mode, int block,
      boolean zeroPoints, WeightLayout layout, int accuracyLevel) {
    int k = 256;
    int n = 96;
    SplittableRandom r = new SplittableRandom(k * 31L + n + block);
    float[] kn = new float[k * n];
    for (int i = 0; i < kn.length; i++) {
      kn[i] = (float) (0.05 * (r.nextDouble() * 2 - 1)) * (r.nextInt(50) == 0 ? 10 : 1);
    }
    float[] bias = new float[n];
    for (int i = 0; i < n; i++) {
      bias[i] = (float) (r.nextDouble() - 0.5);
    }
    float[] x = new float[T * k];
    for (int i = 0; i < x.length; i++) {
      x[i] = (float) (r.nextDouble() * 4 - 2);
    }
    float[] stored = layout == WeightLayout.IN_OUT ? kn
        : PrequantizedCheckpoints.transpose(kn, k, n);
    long[] shape = layout == WeightLayout.IN_OUT ? new long[] {k, n} : new long[] {n, k};
    Map<String, Tensor> tensors = Map.of(
        "w", new Tensor("w", DType.F32, shape, MemorySegment.ofArray(stored)),
        "b", new Tensor("b", DType.F32, new long[] {n}, MemorySegment.ofArray(bias)));
    QuantSpec spec = new QuantSpec(mode, block, zeroPoints, false, accuracyLevel);

    float[] fp32 = run(LinearGraph.build("w", layout, shape, "b", QuantSpec.none()), tensors, x, n);
    float[] quant = run(LinearGraph.build("w", layout, shape, "b", spec), tensors, x, n);
    QuantizedWeight q = BlockQuantizer.quantize(tensors.get("w"), layout, mode.bits(), block,
        zeroPoints);

    for (int t = 0; t < T; t++) {
      for (int col = 0; col < n; col++) {
        double exact = bias[col];
        double dequant = bias[col];
        double formatBound = 0;
        double magnitude = Math.abs(bias[col]);
        double activationBound = 0;
        for (int kk = 0; kk < k; kk++) {
          double xv = x[t * k + kk];
          exact += xv * kn[kk * n + col];
          dequant += xv * q.dequantized(kk, col);
          formatBound += Math.abs(xv) * Math.abs(q.scale(col, kk / block));
          magnitude += Math.abs(xv * q.dequantized(kk, col));
          if (accuracyLevel == 4) {
            // A quantized per block of K to int8: each x off by at most half its block's step
            activationBound += Math.abs(q.dequantized(kk, col)) * blockMax(x, t * k, kk, block)
                / 127 / 2;
          }
        }
        double slack = 1e-5 * magnitude + 1e-6;
        double y = quant[t * n + col];
        double vsDequant = Math.abs(y - dequant);
        assertTrue(vsDequant <= activationBound * 1.01 + slack, String.format(
            "row %d col %d: %.6f vs dequantized float64 %.6f (bound %.2e)", t, col, y, dequant,
            activationBound + slack));
        double vsFp32 = Math.abs(y - fp32[t * n + col]);
        double bound = formatBound + activationBound * 1.01 + 2 * slack;
        assertTrue(vsFp32 <= bound, String.format(
            "row %d col %d: %.6f vs fp32 %.6f, off by %.2e > bound %.2e", t, col, y,
            fp32[t * n + col], vsFp32, bound));
        assertTrue(Math.abs(fp32[t * n + col] - exact) <= slack, "fp32 graph vs float64");
      }
    }
  }

  private static double blockMax(float[] x, int row, int kk, int block) {
    int start = kk / block * block;
    double max = 0;
    for (int j = start; j < start + block; j++) {
      max = Math.max(max, Math.abs(x[row + j]));
    }
    return max;
  }

  private static float[] run(OnnxGraph graph, Map<String, Tensor> tensors, float[] x, int n) {
    try (OrtEnv env = OrtEnv.create("linear-test");
        MemoryInfo cpu = MemoryInfo.cpu();
        Arena arena = Arena.ofConfined();
        SessionOptions options = SessionOptions.create()) {
      options.intraOpThreads(1);
      try (OrtSession session = WeightsFile.session(env, graph, tensors, options,
              WeightStore.temporary());
          OrtSession.Call call = session.call(List.of(LinearGraph.X), List.of(LinearGraph.Y));
          OrtValue in = OrtValue.wrap(cpu, arena.allocateFrom(ValueLayout.JAVA_FLOAT, x),
              ElementType.FLOAT, T, x.length / T)) {
        OrtValue out = call.run(in)[0];
        try {
          return out.data((long) T * n * Float.BYTES).toArray(ValueLayout.JAVA_FLOAT);
        } finally {
          out.close();
        }
      }
    }
  }
}
