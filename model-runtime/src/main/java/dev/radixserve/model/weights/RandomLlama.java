package dev.radixserve.model.weights;

import dev.radixserve.model.LlamaConfig;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Deterministic random-weight Llama-family model (tests' checkpoints, the bench's Llama-shaped
 * model). Same seed and config give bit-identical weights. RMSNorm weights start near 1,
 * everything else is N(0, 0.05²): wide enough that greedy choices are not near-ties.
 */
public final class RandomLlama {

  private static final ValueLayout.OfFloat F32_LE =
      ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

  private RandomLlama() {}

  public static LlamaWeights create(LlamaConfig config, long seed) {
    Arena arena = Arena.ofShared();
    SplittableRandom random = new SplittableRandom(seed);
    Map<String, Tensor> tensors = new LinkedHashMap<>();
    LlamaWeights.expectedShapes(config).forEach((name, shape) -> {
      long n = Tensor.elementCount(shape);
      MemorySegment seg = arena.allocate(n * Float.BYTES, 64);
      boolean norm = name.endsWith("norm.weight");
      for (long i = 0; i < n; i++) {
        double g = RandomGpt2.gaussian(random);
        seg.setAtIndex(F32_LE, i, (float) (norm ? 1.0 + 0.1 * g : 0.05 * g));
      }
      tensors.put(name, new Tensor(name, DType.F32, shape, seg));
    });
    return new LlamaWeights(config, tensors, arena);
  }
}
