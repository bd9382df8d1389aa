package dev.radixserve.model.ort;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Where a tensor's bytes live ({@code OrtMemoryInfo}): host memory, or device memory of an
 * execution provider (e.g. {@code "Cuda"}, device 0) for tensors over memory allocated elsewhere.
 */
public final class MemoryInfo extends NativeHandle {

  private static final int DEVICE_ALLOCATOR = 0; // OrtDeviceAllocator
  private static final int MEM_TYPE_DEFAULT = 0; // OrtMemTypeDefault

  private MemoryInfo(MemorySegment pointer) {
    super("OrtMemoryInfo", pointer);
  }

  /** Host memory the caller allocated (a {@link java.lang.foreign.Arena} segment, a mapped file). */
  public static MemoryInfo cpu() {
    OrtApi api = OrtApi.get();
    try (Arena arena = Arena.ofConfined()) {
      return new MemoryInfo(api.createCpuMemoryInfo(DEVICE_ALLOCATOR, MEM_TYPE_DEFAULT,
          arena.allocate(ValueLayout.ADDRESS)));
    }
  }

  /**
   * Memory of a named device allocator, e.g. {@code ("Cuda", 0)} for CUDA device 0 or
   * {@code ("Cpu", 0)}.
   */
  public static MemoryInfo device(String name, int deviceId) {
    OrtApi api = OrtApi.get();
    try (Arena arena = Arena.ofConfined()) {
      return new MemoryInfo(api.createMemoryInfo(arena.allocateFrom(name), DEVICE_ALLOCATOR,
          deviceId, MEM_TYPE_DEFAULT, arena.allocate(ValueLayout.ADDRESS)));
    }
  }

  @Override
  void release(OrtApi api, MemorySegment pointer) {
    api.releaseMemoryInfo(pointer);
  }
}
