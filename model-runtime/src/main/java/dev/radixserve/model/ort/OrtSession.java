package dev.radixserve.model.ort;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;

/**
 * An {@code OrtSession} over an in-memory ONNX model. Runs go through a {@link Call}, which keeps
 * the native name and value arrays of one input/output signature for reuse across steps.
 */
public final class OrtSession extends NativeHandle {

  private OrtSession(MemorySegment pointer) {
    super("OrtSession", pointer);
  }

  /**
   * @param model serialized {@code ModelProto}; ONNX Runtime copies what it needs during the call
   */
  public static OrtSession create(OrtEnv env, byte[] model, SessionOptions options) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment bytes = arena.allocate(model.length);
      MemorySegment.copy(model, 0, bytes, ValueLayout.JAVA_BYTE, 0, model.length);
      return new OrtSession(OrtApi.get().createSessionFromArray(env.pointer(), bytes,
          options.pointer(), arena.allocate(ValueLayout.ADDRESS)));
    }
  }

  public long inputCount() {
    try (Arena arena = Arena.ofConfined()) {
      return OrtApi.get().sessionInputCount(pointer(), arena.allocate(ValueLayout.JAVA_LONG));
    }
  }

  public long outputCount() {
    try (Arena arena = Arena.ofConfined()) {
      return OrtApi.get().sessionOutputCount(pointer(), arena.allocate(ValueLayout.JAVA_LONG));
    }
  }

  /** A reusable run signature: these inputs in this order, these outputs in this order. */
  public Call call(List<String> inputNames, List<String> outputNames) {
    return new Call(inputNames, outputNames);
  }

  @Override
  void release(OrtApi api, MemorySegment pointer) {
    api.releaseSession(pointer);
  }

  /** Native name arrays and value slots for one signature; closed with {@link #close()}. */
  public final class Call implements AutoCloseable {
    private final Arena arena = Arena.ofShared();
    private final int inputCount;
    private final int outputCount;
    private final MemorySegment inputNames;
    private final MemorySegment outputNames;
    private final MemorySegment inputs;
    private final MemorySegment outputs;

    private Call(List<String> in, List<String> out) {
      inputCount = in.size();
      outputCount = out.size();
      inputNames = names(in);
      outputNames = names(out);
      inputs = arena.allocate(ValueLayout.ADDRESS, Math.max(1, inputCount));
      outputs = arena.allocate(ValueLayout.ADDRESS, Math.max(1, outputCount));
    }

    private MemorySegment names(List<String> names) {
      MemorySegment array = arena.allocate(ValueLayout.ADDRESS, Math.max(1, names.size()));
      for (int i = 0; i < names.size(); i++) {
        array.setAtIndex(ValueLayout.ADDRESS, i, arena.allocateFrom(names.get(i)));
      }
      return array;
    }

    /**
     * Runs the session.
     *
     * @param values one per input name, in order
     * @return one new value per output name, in order; the caller closes them
     */
    public OrtValue[] run(OrtValue... values) {
      return run(values, new OrtValue[outputCount]);
    }

    /**
     * Runs the session into caller-bound outputs where given: ONNX Runtime writes those outputs
     * into the bound values' memory (no copy), and allocates the others.
     *
     * @param values one per input name, in order
     * @param bound one per output name: a value to write into, or null to let ONNX Runtime
     *     allocate it
     * @return per output, the new value ONNX Runtime allocated (the caller closes it), or null
     *     where the output was bound
     */
    public OrtValue[] run(OrtValue[] values, OrtValue[] bound) {
      if (values.length != inputCount || bound.length != outputCount) {
        throw new IllegalArgumentException("the call has " + inputCount + " inputs and "
            + outputCount + " outputs, got " + values.length + " and " + bound.length);
      }
      for (int i = 0; i < inputCount; i++) {
        inputs.setAtIndex(ValueLayout.ADDRESS, i, values[i].pointer());
      }
      for (int i = 0; i < outputCount; i++) {
        outputs.setAtIndex(ValueLayout.ADDRESS, i,
            bound[i] == null ? MemorySegment.NULL : bound[i].pointer());
      }
      OrtApi.get().run(pointer(), inputNames, inputs, inputCount, outputNames, outputCount, outputs);
      OrtValue[] result = new OrtValue[outputCount];
      for (int i = 0; i < outputCount; i++) {
        if (bound[i] == null) {
          result[i] = OrtValue.adopt(outputs.getAtIndex(ValueLayout.ADDRESS, i));
        }
      }
      return result;
    }

    @Override
    public void close() {
      if (arena.scope().isAlive()) {
        arena.close();
      }
    }
  }
}
