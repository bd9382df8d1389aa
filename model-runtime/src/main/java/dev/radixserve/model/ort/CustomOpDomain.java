package dev.radixserve.model.ort;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;

/**
 * An {@code OrtCustomOpDomain}: custom ops under one domain name, added to the session options of
 * every session whose graph uses them. ONNX Runtime requires it to outlive those sessions; the
 * runtime keeps one per process (see {@code PagedAttentionOp}).
 */
public final class CustomOpDomain extends NativeHandle {

  private final List<CustomOp> ops;

  private CustomOpDomain(MemorySegment pointer, List<CustomOp> ops) {
    super("OrtCustomOpDomain", pointer);
    this.ops = List.copyOf(ops);
  }

  /** A domain named {@code domain} (e.g. {@code com.microsoft}) holding {@code ops}. */
  public static CustomOpDomain create(String domain, List<CustomOp> ops) {
    OrtKernelApi kapi = OrtKernelApi.get();
    MemorySegment pointer;
    try (Arena arena = Arena.ofConfined()) {
      pointer = kapi.createCustomOpDomain(arena.allocateFrom(domain),
          arena.allocate(ValueLayout.ADDRESS));
    }
    CustomOpDomain d = new CustomOpDomain(pointer, ops);
    for (CustomOp op : ops) {
      kapi.customOpDomainAdd(pointer, op.struct());
    }
    return d;
  }

  public List<CustomOp> ops() {
    return ops;
  }

  void addTo(SessionOptions options) {
    OrtKernelApi.get().addCustomOpDomain(options.pointer(), pointer());
  }

  @Override
  void release(OrtApi api, MemorySegment pointer) {
    OrtKernelApi.get().releaseCustomOpDomain(pointer);
  }
}
