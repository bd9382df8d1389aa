package dev.radixserve.model.ort;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A session's allocator for one memory kind ({@code CreateAllocator}): CUDA device memory on a
 * CUDA session, host memory on a CPU one. Tensors it allocates ({@link #tensor}) live where the
 * session's kernels read them, so a pool allocated here never crosses the bus.
 */
public final class Allocator extends NativeHandle {

  private final MemoryInfo info;

  private Allocator(MemorySegment pointer, MemoryInfo info) {
    super("OrtAllocator", pointer);
    this.info = info;
  }

  /** The allocator {@code session} uses for memory of {@code info}'s kind. */
  public static Allocator of(OrtSession session, MemoryInfo info) {
    try (Arena arena = Arena.ofConfined()) {
      return new Allocator(OrtApi.get().createAllocator(session.pointer(), info.pointer(),
          arena.allocate(ValueLayout.ADDRESS)), info);
    }
  }

  /** Where this allocator's memory lives. */
  public MemoryInfo memoryInfo() {
    return info;
  }

  /** A new tensor in this allocator's memory (contents undefined); the caller closes it. */
  public OrtValue tensor(ElementType type, long... shape) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment dims = arena.allocateFrom(ValueLayout.JAVA_LONG, shape);
      return OrtValue.adopt(OrtApi.get().createTensorAsOrtValue(pointer(), dims, shape.length,
          type.code(), arena.allocate(ValueLayout.ADDRESS)));
    }
  }

  @Override
  void release(OrtApi api, MemorySegment pointer) {
    api.releaseAllocator(pointer);
  }
}
