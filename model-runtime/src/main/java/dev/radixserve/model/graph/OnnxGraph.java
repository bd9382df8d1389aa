package dev.radixserve.model.graph;

import java.util.List;

/**
 * A built graph: the serialized {@code ModelProto} and, in declaration order, the initializers
 * whose data the runner must supply.
 */
public record OnnxGraph(byte[] model, List<ExternalInitializer> initializers) {

  public OnnxGraph {
    initializers = List.copyOf(initializers);
  }

  /** The initializers' names, in the order of {@link #initializers}. */
  public List<String> initializerNames() {
    return initializers.stream().map(ExternalInitializer::name).toList();
  }
}
