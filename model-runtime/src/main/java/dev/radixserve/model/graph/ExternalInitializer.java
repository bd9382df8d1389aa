package dev.radixserve.model.graph;

/**
 * An initializer the graph declares without data: the runner hands ONNX Runtime its data at
 * session creation ({@code AddExternalInitializers}), made from {@code source}.
 *
 * @param elemType ONNX element type code ({@code TensorProto.DataType})
 */
public record ExternalInitializer(String name, int elemType, long[] dims, WeightSource source) {

  public ExternalInitializer {
    dims = dims.clone();
  }

  @Override
  public long[] dims() {
    return dims.clone();
  }
}
