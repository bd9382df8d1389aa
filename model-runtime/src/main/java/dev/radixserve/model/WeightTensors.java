package dev.radixserve.model;

import dev.radixserve.model.graph.GraphDtype;
import dev.radixserve.model.ort.ElementType;
import dev.radixserve.model.ort.MemoryInfo;
import dev.radixserve.model.ort.OrtValue;
import dev.radixserve.model.weights.DType;
import dev.radixserve.model.weights.Tensor;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Map;

/**
 * One {@link OrtValue} per weight (fp32, or the graph's fp16/bf16), in the order of the family graph's {@code initializers()}: the data the
 * session gets for the graph's external initializers ({@code AddExternalInitializers}). F32
 * tensors in native, 4-byte aligned memory are wrapped as they are; others (F16, BF16, heap or
 * misaligned data) are converted into fp32 memory owned here. ONNX Runtime copies the data while
 * it creates the session, so these values (and the converted memory) are closed right after.
 *
 * <p>Why this route: {@code AddInitializer} only replaces an initializer whose data the model
 * already holds (embedding every weight in the protobuf would copy it twice), and ONNX Runtime
 * rejects a data-less initializer; an external-data reference that no file holds, filled from
 * memory by {@code AddExternalInitializers} (API 12), is accepted, and the weights become real
 * initializers (MatMul pre-packing, constant folding).
 */
final class WeightTensors implements AutoCloseable {

  private final Arena converted;
  private final OrtValue[] values;

  private WeightTensors(Arena converted, OrtValue[] values) {
    this.converted = converted;
    this.values = values;
  }

  static WeightTensors of(ModelWeights weights, MemoryInfo info) {
    return of(weights, info, GraphDtype.FLOAT32);
  }

  /** The weights in {@code dtype} (rounded to nearest even where it is narrower than theirs). */
  static WeightTensors of(ModelWeights weights, MemoryInfo info, GraphDtype dtype) {
    Map<String, long[]> shapes = weights.graph().initializers();
    Arena arena = Arena.ofShared();
    OrtValue[] values = new OrtValue[shapes.size()];
    int i = 0;
    try {
      for (Map.Entry<String, long[]> e : shapes.entrySet()) {
        Tensor t = weights.tensor(e.getKey());
        MemorySegment data = dtype == GraphDtype.FLOAT32 ? fp32(t, arena) : convert(t, dtype, arena);
        values[i++] = OrtValue.wrap(info, data, dtype.element(), e.getValue());
      }
    } catch (RuntimeException ex) {
      for (OrtValue v : values) {
        if (v != null) {
          v.close();
        }
      }
      arena.close();
      throw ex;
    }
    return new WeightTensors(arena, values);
  }

  private static MemorySegment fp32(Tensor t, Arena arena) {
    MemorySegment data = t.data();
    if (t.dtype() == DType.F32 && data.isNative() && data.address() % Float.BYTES == 0) {
      return data;
    }
    long n = t.elementCount();
    MemorySegment copy = arena.allocate(n * Float.BYTES, 64);
    for (long k = 0; k < n; k++) {
      copy.setAtIndex(ValueLayout.JAVA_FLOAT, k, t.get(k));
    }
    return copy;
  }

  private static MemorySegment convert(Tensor t, GraphDtype dtype, Arena arena) {
    long n = t.elementCount();
    MemorySegment copy = arena.allocate(n * dtype.bytes(), 64);
    for (long k = 0; k < n; k++) {
      dtype.store(copy, k, t.get(k));
    }
    return copy;
  }

  OrtValue[] values() {
    return values;
  }

  @Override
  public void close() {
    for (OrtValue v : values) {
      v.close();
    }
    if (converted.scope().isAlive()) {
      converted.close();
    }
  }
}
