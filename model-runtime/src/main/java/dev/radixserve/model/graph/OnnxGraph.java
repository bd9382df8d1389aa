package dev.radixserve.model.graph;

import dev.radixserve.model.ort.ElementType;
import java.util.List;

/**
 * A built graph: the serialized {@code ModelProto} and, in declaration order, the initializers
 * whose data the runner must supply.
 */
public record OnnxGraph(byte[] model, List<ExternalInitializer> initializers) {

  public OnnxGraph {
    initializers = List.copyOf(initializers);
  }

  /**
   * Bytes of all initializer data ONNX Runtime gets (the weights as this graph stores them:
   * quantized blocks and scales, fp32 or the graph's dtype otherwise).
   */
  public long initializerBytes() {
    long total = 0;
    for (ExternalInitializer i : initializers) {
      long bytes = ElementType.ofCode(i.elemType()).bytes();
      for (long d : i.dims()) {
        bytes *= d;
      }
      total += bytes;
    }
    return total;
  }

  /** How many checkpoint tensors this graph reads quantized (as MatMulNBits' weight input). */
  public long quantizedWeights() {
    return initializers.stream().filter(i -> i.source() instanceof WeightSource.Quantized q
        && q.part() == WeightSource.Part.WEIGHT && !i.name().endsWith(Linear.GATHER_WEIGHT))
        .count();
  }

  /** The initializers' names, in the order of {@link #initializers}. */
  public List<String> initializerNames() {
    return initializers.stream().map(ExternalInitializer::name).toList();
  }
}
