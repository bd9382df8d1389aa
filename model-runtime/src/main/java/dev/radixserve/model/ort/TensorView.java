package dev.radixserve.model.ort;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * A custom kernel's view of one input or output tensor: its element type, shape and bytes (host
 * memory, valid only during the kernel's compute call).
 *
 * @param data exactly {@code elements * type.bytes()} bytes
 */
public record TensorView(ElementType type, long[] shape, MemorySegment data) {

  public int rank() {
    return shape.length;
  }

  public long dim(int i) {
    return shape[i];
  }

  public long elements() {
    long n = 1;
    for (long d : shape) {
      n *= d;
    }
    return n;
  }

  @Override
  public String toString() {
    return type + Arrays.toString(shape);
  }
}
