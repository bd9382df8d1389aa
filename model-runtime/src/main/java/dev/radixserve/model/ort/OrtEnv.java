package dev.radixserve.model.ort;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** An {@code OrtEnv} (logging and the shared state sessions are created in). */
public final class OrtEnv extends NativeHandle {

  /** {@code ORT_LOGGING_LEVEL_WARNING}: ONNX Runtime's own warnings go to stderr. */
  private static final int LOG_WARNING = 2;

  private OrtEnv(MemorySegment pointer) {
    super("OrtEnv", pointer);
  }

  public static OrtEnv create(String logId) {
    OrtApi api = OrtApi.get();
    try (Arena arena = Arena.ofConfined()) {
      return new OrtEnv(api.createEnv(LOG_WARNING, arena.allocateFrom(logId),
          arena.allocate(ValueLayout.ADDRESS)));
    }
  }

  @Override
  void release(OrtApi api, MemorySegment pointer) {
    api.releaseEnv(pointer);
  }
}
