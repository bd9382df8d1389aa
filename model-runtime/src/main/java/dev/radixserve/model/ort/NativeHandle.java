package dev.radixserve.model.ort;

import java.lang.foreign.MemorySegment;

/**
 * Sole owner of one ONNX Runtime object. {@link #close()} releases it once; closing again does
 * nothing; using it after close throws {@link IllegalStateException}. Not thread-safe.
 */
abstract class NativeHandle implements AutoCloseable {

  private final String kind;
  private MemorySegment pointer;

  NativeHandle(String kind, MemorySegment pointer) {
    if (pointer.address() == 0) {
      throw new IllegalStateException("ONNX Runtime returned a null " + kind);
    }
    this.kind = kind;
    this.pointer = pointer;
  }

  /** The native pointer; throws if already closed. */
  final MemorySegment pointer() {
    if (pointer == null) {
      throw new IllegalStateException(kind + " is closed");
    }
    return pointer;
  }

  final boolean isClosed() {
    return pointer == null;
  }

  /** Releases the native object through the matching {@code Release*} function. */
  abstract void release(OrtApi api, MemorySegment pointer);

  @Override
  public void close() {
    if (pointer != null) {
      MemorySegment p = pointer;
      pointer = null;
      release(OrtApi.get(), p);
    }
  }
}
