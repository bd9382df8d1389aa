package dev.radixserve.model.graph;

/**
 * An initializer the graph declares without data: the runner writes its data, made from {@code
 * source}, into the weights file ONNX Runtime maps ({@code WeightsFile}).
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
