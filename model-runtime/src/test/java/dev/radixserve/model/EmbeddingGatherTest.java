package dev.radixserve.model;

import static org.junit.jupiter.api.Assertions.assertEquals;

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
 * A quantized embedding ({@code com.microsoft.GatherBlockQuantized} over the blocks this
 * project writes, through the model's own emitter and weight path) gives each looked-up row
 * exactly as the blocks dequantize, {@code (code − zero point) · scale} in float: the bits
 * MatMulNBits reads for a tied head are the bits the embedding reads.
 */
class EmbeddingGatherTest {

  @ParameterizedTest(name = "{0}, block {1}, zero points {2}")
  @CsvSource({"INT8, 32, false", "INT8, 128, false", "INT8, 64, true", "INT4, 32, true",
      "INT4, 32, false", "INT4, 128, true"})
  void rowsAreTheDequantizedBlocksExactly(QuantMode mode, int block, boolean zeroPoints) {
    int rows = 50;
    int k = 256;
    SplittableRandom r = new SplittableRandom(rows * 7L + k + block);
    float[] table = new float[rows * k];
    for (int i = 0; i < table.length; i++) {
      table[i] = (float) (0.05 * (r.nextDouble() * 2 - 1)) * (r.nextInt(50) == 0 ? 10 : 1);
    }
    long[] shape = {rows, k};
    Tensor t = new Tensor("embed", DType.F32, shape, MemorySegment.ofArray(table));
    QuantSpec spec = new QuantSpec(mode, block, zeroPoints, false, 0);
    long[] ids = {3, 0, 49, 3, 17, 48};

    float[] got = run(LinearGraph.gatherRows("embed", shape, spec), Map.of("embed", t), ids, k);
    QuantizedWeight q = BlockQuantizer.quantize(t, WeightLayout.OUT_IN, mode.bits(), block,
        zeroPoints);
    for (int i = 0; i < ids.length; i++) {
      for (int kk = 0; kk < k; kk++) {
        float want = q.dequantized(kk, (int) ids[i]);
        assertEquals(want, got[i * k + kk], 0f, "id " + ids[i] + " column " + kk);
      }
    }
  }

  /** The looked-up rows of {@code ids}, [ids, k], through a session over {@code graph}. */
  static float[] run(OnnxGraph graph, Map<String, Tensor> tensors, long[] ids, int k) {
    try (OrtEnv env = OrtEnv.create("embedding-test");
        MemoryInfo cpu = MemoryInfo.cpu();
        Arena arena = Arena.ofConfined();
        SessionOptions options = SessionOptions.create()) {
      options.intraOpThreads(1);
      try (OrtSession session = WeightsFile.session(env, graph, tensors, options,
              WeightStore.temporary());
          OrtSession.Call call = session.call(List.of(LinearGraph.IDS), List.of(LinearGraph.Y));
          OrtValue in = OrtValue.wrap(cpu, arena.allocateFrom(ValueLayout.JAVA_LONG, ids),
              ElementType.INT64, ids.length)) {
        OrtValue out = call.run(in)[0];
        try {
          return out.data((long) ids.length * k * Float.BYTES).toArray(ValueLayout.JAVA_FLOAT);
        } finally {
          out.close();
        }
      }
    }
  }
}
