package dev.radixserve.model.ort;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.HashMap;
import java.util.Map;

/**
 * An {@code OrtIoBinding}: inputs and outputs bound to values once and reused across runs, so a
 * run neither copies nor allocates what stays bound (the KV pool, the weights' session). This is
 * the only way ONNX Runtime's C API lets a caller hand it device memory and pre-allocated outputs;
 * the runner uses it on the CPU too, so the CPU suite exercises the same calls.
 *
 * <p>Rebinding a name replaces the earlier binding. Names are kept as native strings for the
 * binding's life (a step rebinds the same few names every time).
 */
public final class IoBinding extends NativeHandle {

  private final OrtSession session;
  private final Arena names = Arena.ofShared();
  private final Map<String, MemorySegment> nativeNames = new HashMap<>();
  private final Map<String, Integer> bindCounts = new HashMap<>();
  private long boundBytes;

  private IoBinding(OrtSession session, MemorySegment pointer) {
    super("OrtIoBinding", pointer);
    this.session = session;
  }

  public static IoBinding create(OrtSession session) {
    try (Arena arena = Arena.ofConfined()) {
      return new IoBinding(session,
          OrtApi.get().createIoBinding(session.pointer(), arena.allocate(ValueLayout.ADDRESS)));
    }
  }

  /** Binds input {@code name} to {@code value} (host or device memory, as its memory info says). */
  public void bindInput(String name, OrtValue value) {
    OrtApi.get().bindInput(pointer(), nativeName(name), value.pointer());
    counted(name, value);
  }

  /** Binds output {@code name} to {@code value}: the run writes into its memory. */
  public void bindOutput(String name, OrtValue value) {
    OrtApi.get().bindOutput(pointer(), nativeName(name), value.pointer());
    counted(name, value);
  }

  /** Times {@code name} was bound (to a value) since this binding was made. */
  public int bindCount(String name) {
    return bindCounts.getOrDefault(name, 0);
  }

  /** Bytes of every value bound so far (shape × element size), summed over all binds. */
  public long boundBytes() {
    return boundBytes;
  }

  private void counted(String name, OrtValue value) {
    bindCounts.merge(name, 1, Integer::sum);
    boundBytes += value.byteSize();
  }

  /** Lets the run allocate output {@code name} on the device {@code info} names. */
  public void bindOutputToDevice(String name, MemoryInfo info) {
    OrtApi.get().bindOutputToDevice(pointer(), nativeName(name), info.pointer());
  }

  /** Runs the session over the bound values. */
  public void run() {
    OrtApi.get().runWithBinding(session.pointer(), pointer());
  }

  /** Waits until the bound inputs have reached their device (copies are asynchronous on CUDA). */
  public void synchronizeInputs() {
    OrtApi.get().synchronizeBoundInputs(pointer());
  }

  /** Waits until the run has written its outputs (the run returns before a device finishes). */
  public void synchronizeOutputs() {
    OrtApi.get().synchronizeBoundOutputs(pointer());
  }

  /**
   * The output values of the last run in binding order; the caller closes them (each is a new
   * reference: a pre-bound output's memory stays the caller's).
   */
  public OrtValue[] outputs() {
    OrtApi api = OrtApi.get();
    MemorySegment[] raw = api.boundOutputValues(pointer(), api.defaultAllocator());
    OrtValue[] values = new OrtValue[raw.length];
    for (int i = 0; i < raw.length; i++) {
      values[i] = OrtValue.adopt(raw[i]);
    }
    return values;
  }

  public void clearInputs() {
    OrtApi.get().clearBoundInputs(pointer());
  }

  public void clearOutputs() {
    OrtApi.get().clearBoundOutputs(pointer());
  }

  private MemorySegment nativeName(String name) {
    return nativeNames.computeIfAbsent(name, names::allocateFrom);
  }

  @Override
  void release(OrtApi api, MemorySegment pointer) {
    api.releaseIoBinding(pointer);
    names.close();
  }
}
