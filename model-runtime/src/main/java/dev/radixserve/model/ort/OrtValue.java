package dev.radixserve.model.ort;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;

/**
 * A tensor {@code OrtValue}. Either a view over memory the caller owns ({@link #wrap}: no copy; the
 * memory must outlive the value) or a result of {@link OrtSession.Call#run}, whose buffer ONNX
 * Runtime owns until {@link #close()}.
 */
public final class OrtValue extends NativeHandle {

  private OrtValue(MemorySegment pointer) {
    super("OrtValue", pointer);
  }

  static OrtValue adopt(MemorySegment pointer) {
    return new OrtValue(pointer);
  }

  /**
   * A tensor over {@code data} (host or device memory as {@code info} says), without copying.
   *
   * @throws IllegalArgumentException if {@code data} is not exactly the size the shape implies
   */
  public static OrtValue wrap(MemoryInfo info, MemorySegment data, ElementType type, long... shape) {
    long elements = 1;
    for (long d : shape) {
      if (d < 0) {
        throw new IllegalArgumentException("negative dimension in " + Arrays.toString(shape));
      }
      elements *= d;
    }
    if (data.byteSize() != elements * type.bytes()) {
      throw new IllegalArgumentException("a " + type + " tensor " + Arrays.toString(shape) + " needs "
          + elements * type.bytes() + " bytes, the segment has " + data.byteSize());
    }
    if (!data.isNative()) {
      throw new IllegalArgumentException("a tensor needs native memory, not a heap segment");
    }
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment dims = arena.allocateFrom(ValueLayout.JAVA_LONG, shape);
      return new OrtValue(OrtApi.get().createTensorWithData(info.pointer(), data, dims,
          shape.length, type.code(), arena.allocate(ValueLayout.ADDRESS)));
    }
  }

  /** The tensor's shape. */
  public long[] shape() {
    OrtApi api = OrtApi.get();
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment info = api.tensorTypeAndShape(pointer(), arena.allocate(ValueLayout.ADDRESS));
      try {
        long rank = api.dimensionsCount(info, arena.allocate(ValueLayout.JAVA_LONG));
        MemorySegment dims = arena.allocate(ValueLayout.JAVA_LONG, Math.max(1, rank));
        api.dimensions(info, dims, rank);
        return dims.asSlice(0, rank * Long.BYTES).toArray(ValueLayout.JAVA_LONG);
      } finally {
        api.releaseTensorTypeAndShapeInfo(info);
      }
    }
  }

  /** Bytes the tensor's elements take (shape × element size). */
  public long byteSize() {
    long elements = 1;
    for (long d : shape()) {
      elements *= d;
    }
    return elements * elementType().bytes();
  }

  public ElementType elementType() {
    OrtApi api = OrtApi.get();
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment info = api.tensorTypeAndShape(pointer(), arena.allocate(ValueLayout.ADDRESS));
      try {
        return ElementType.ofCode(api.tensorElementType(info, arena.allocate(ValueLayout.JAVA_INT)));
      } finally {
        api.releaseTensorTypeAndShapeInfo(info);
      }
    }
  }

  /**
   * The tensor's bytes (valid until this value is closed), sized from its shape and element type.
   */
  public MemorySegment data() {
    long[] shape = shape();
    long elements = 1;
    for (long d : shape) {
      elements *= d;
    }
    long bytes = elements * elementType().bytes();
    try (Arena arena = Arena.ofConfined()) {
      return OrtApi.get().tensorMutableData(pointer(), arena.allocate(ValueLayout.ADDRESS))
          .reinterpret(bytes);
    }
  }

  /**
   * The tensor's first {@code bytes} bytes, for a caller that knows the shape (skips the shape
   * queries of {@link #data()} on the hot path).
   */
  public MemorySegment data(long bytes) {
    try (Arena arena = Arena.ofConfined()) {
      return OrtApi.get().tensorMutableData(pointer(), arena.allocate(ValueLayout.ADDRESS))
          .reinterpret(bytes);
    }
  }

  @Override
  void release(OrtApi api, MemorySegment pointer) {
    api.releaseValue(pointer);
  }
}
