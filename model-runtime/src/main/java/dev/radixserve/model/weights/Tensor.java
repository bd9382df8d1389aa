package dev.radixserve.model.weights;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;

/**
 * A named weight tensor over memory its {@link GptWeights} owns (a heap array, an arena, or a
 * memory-mapped safetensors file). Row-major, little-endian.
 */
public record Tensor(String name, DType dtype, long[] shape, MemorySegment data) {

  private static final ValueLayout.OfFloat F32_LE =
      ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);
  private static final ValueLayout.OfShort U16_LE =
      ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);
  private static final ValueLayout.OfInt I32_LE =
      ValueLayout.JAVA_INT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);

  public Tensor {
    shape = shape.clone();
    long expected = elementCount(shape) * dtype.bytes();
    if (data.byteSize() != expected) {
      throw new IllegalArgumentException(
          "tensor " + name + " " + Arrays.toString(shape) + " " + dtype + " needs " + expected
              + " bytes, has " + data.byteSize());
    }
  }

  public static long elementCount(long[] shape) {
    long n = 1;
    for (long d : shape) {
      n *= d;
    }
    return n;
  }

  public long elementCount() {
    return elementCount(shape);
  }

  /** Element i as a float, widening F16/BF16. */
  public float get(long i) {
    return switch (dtype) {
      case F32 -> data.getAtIndex(F32_LE, i);
      case F16 -> Float.float16ToFloat(data.getAtIndex(U16_LE, i));
      case BF16 -> Float.intBitsToFloat((data.getAtIndex(U16_LE, i) & 0xffff) << 16);
      case I32 -> throw new IllegalStateException("tensor " + name + " holds I32 integers, not"
          + " floats");
    };
  }

  /** Element i of an I32 tensor. */
  public int getInt(long i) {
    if (dtype != DType.I32) {
      throw new IllegalStateException("tensor " + name + " holds " + dtype + ", not I32");
    }
    return data.getAtIndex(I32_LE, i);
  }

  /** A float copy of the whole tensor (for references and tests; the run path avoids it). */
  public float[] toFloatArray() {
    long n = elementCount();
    if (n > Integer.MAX_VALUE) {
      throw new IllegalStateException("tensor " + name + " has " + n + " elements, too many for an array");
    }
    float[] out = new float[(int) n];
    for (int i = 0; i < out.length; i++) {
      out[i] = get(i);
    }
    return out;
  }
}
