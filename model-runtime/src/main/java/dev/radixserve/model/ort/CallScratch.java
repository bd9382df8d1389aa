package dev.radixserve.model.ort;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;

/**
 * The out-parameters and small arrays of one custom-op compute call, cut from a per-thread
 * buffer that is reused call after call. A confined arena per call cost a {@code malloc} and a
 * {@code free} for each of the ~70 out-parameters a paged-attention call passes to ONNX Runtime:
 * 12 % of the op's time at batch-1 decode (JFR). Not zeroed: every user is an out-parameter
 * ONNX Runtime writes, or {@code allocateFrom}, which copies.
 */
final class CallScratch implements SegmentAllocator, AutoCloseable {

  private static final long BYTES = 16 * 1024;
  private static final ThreadLocal<CallScratch> OF_THREAD =
      ThreadLocal.withInitial(CallScratch::new);

  /** Freed when the thread (and so this scratch) is gone. */
  private final MemorySegment buffer = Arena.ofAuto().allocate(BYTES, 16);
  private long used;
  /** Takes what does not fit in the buffer; closed at the end of the call. */
  private Arena overflow;
  private boolean open;

  private CallScratch() {}

  /** The calling thread's scratch, empty; close it when the call returns. */
  static CallScratch begin() {
    CallScratch s = OF_THREAD.get();
    if (s.open) {
      throw new IllegalStateException("compute calls nested on one thread");
    }
    s.open = true;
    s.used = 0;
    return s;
  }

  @Override
  public MemorySegment allocate(long byteSize, long byteAlignment) {
    long start = (used + byteAlignment - 1) & -byteAlignment;
    if (start + byteSize <= BYTES) {
      used = start + byteSize;
      return buffer.asSlice(start, byteSize);
    }
    if (overflow == null) {
      overflow = Arena.ofConfined();
    }
    return overflow.allocate(byteSize, byteAlignment);
  }

  @Override
  public void close() {
    open = false;
    if (overflow != null) {
      overflow.close();
      overflow = null;
    }
  }
}
