package dev.radixserve.model;

import dev.radixserve.model.graph.GraphDtype;
import dev.radixserve.model.ort.CudaProvider;

/**
 * Where the model runs and in which precision.
 *
 * @param kind CPU (ONNX Runtime's CPU provider) or CUDA
 * @param dtype what the graph computes and the KV pool stores in
 * @param cuda provider settings; used only on CUDA
 */
public record Device(Kind kind, GraphDtype dtype, CudaProvider.Settings cuda) {

  public enum Kind {
    CPU,
    CUDA;

    /** The setting's spelling: {@code cpu}, {@code cuda}. */
    public String settingName() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  public Device {
    if (kind == Kind.CPU && dtype == GraphDtype.BFLOAT16) {
      throw new IllegalArgumentException("dtype bfloat16 runs only on --device cuda (the CPU"
          + " kernels are fp32, with an fp16 stand-in for tests)");
    }
  }

  /** The CPU default: fp32, the runner radixserve has always used. */
  public static Device cpu() {
    return new Device(Kind.CPU, GraphDtype.FLOAT32, new CudaProvider.Settings(0, false));
  }

  /** CUDA device {@code id} in fp16, without TF32. */
  public static Device cuda(int id) {
    return new Device(Kind.CUDA, GraphDtype.FLOAT16, new CudaProvider.Settings(id, false));
  }

  public Device withDtype(GraphDtype dtype) {
    return new Device(kind, dtype, cuda);
  }
}
