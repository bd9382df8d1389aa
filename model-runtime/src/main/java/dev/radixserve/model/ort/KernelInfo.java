package dev.radixserve.model.ort;

import java.lang.foreign.MemorySegment;

/** A node's attributes as a custom kernel sees them when ONNX Runtime creates it. */
public final class KernelInfo {

  private final MemorySegment info;

  KernelInfo(MemorySegment info) {
    this.info = info;
  }

  /** The integer attribute {@code name}, or {@code fallback} when the node does not set it. */
  public long int64(String name, long fallback) {
    Long v = OrtKernelApi.get().attributeInt64(info, name);
    return v == null ? fallback : v;
  }

  /** The float attribute {@code name}, or {@code fallback} when the node does not set it. */
  public float float32(String name, float fallback) {
    Float v = OrtKernelApi.get().attributeFloat(info, name);
    return v == null ? fallback : v;
  }
}
