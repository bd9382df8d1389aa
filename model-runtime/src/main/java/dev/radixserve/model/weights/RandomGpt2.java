package dev.radixserve.model.weights;

import dev.radixserve.model.ModelConfig;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Deterministic random-weight GPT-2 (the embedded default model, and tests' tiny models).
 * Same seed and config give bit-identical weights. Layer norms start near identity and matrices
 * are N(0, 0.02) as in GPT-2's initialisation, so activations stay in a realistic range.
 */
public final class RandomGpt2 {

  private RandomGpt2() {}

  public static GptWeights create(ModelConfig config, long seed) {
    Arena arena = Arena.ofShared();
    SplittableRandom random = new SplittableRandom(seed);
    Map<String, Tensor> tensors = new LinkedHashMap<>();
    GptWeights.expectedShapes(config).forEach((name, shape) -> {
      long n = Tensor.elementCount(shape);
      MemorySegment seg = arena.allocate(n * 4, 64);
      boolean lnWeight = name.endsWith("ln_1.weight") || name.endsWith("ln_2.weight")
          || name.equals("ln_f.weight");
      boolean bias = name.endsWith(".bias");
      for (long i = 0; i < n; i++) {
        double v;
        if (lnWeight) {
          v = 1.0 + 0.1 * gaussian(random);
        } else if (bias) {
          v = 0.02 * gaussian(random);
        } else {
          v = 0.02 * gaussian(random);
        }
        seg.setAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN), i, (float) v);
      }
      tensors.put(name, new Tensor(name, DType.F32, shape, seg));
    });
    return new GptWeights(config, tensors, arena);
  }

  // Box-Muller; SplittableRandom has no nextGaussian with a stable algorithm across JDKs.
  static double gaussian(SplittableRandom r) {
    double u1 = r.nextDouble();
    double u2 = r.nextDouble();
    return Math.sqrt(-2 * Math.log(1 - u1)) * Math.cos(2 * Math.PI * u2);
  }
}
