package dev.radixserve.model;

import dev.radixserve.model.graph.ExternalInitializer;
import dev.radixserve.model.graph.GraphDtype;
import dev.radixserve.model.graph.WeightSource;
import dev.radixserve.model.ort.ElementType;
import dev.radixserve.model.ort.MemoryInfo;
import dev.radixserve.model.ort.OrtValue;
import dev.radixserve.model.quant.BlockQuantizer;
import dev.radixserve.model.quant.CheckpointQuantization;
import dev.radixserve.model.quant.CheckpointRepacker;
import dev.radixserve.model.quant.QuantizedWeight;
import dev.radixserve.model.weights.DType;
import dev.radixserve.model.weights.Tensor;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One {@link OrtValue} per external initializer the graph declares, in its order: the data the
 * session gets for them ({@code AddExternalInitializers}), in the type the graph declares (fp32,
 * or its fp16/bf16, rounded to nearest even). A dense F32 weight wanted as fp32, native and
 * 4-byte aligned, is wrapped as it is; others (F16, BF16, heap or misaligned data, another
 * type, rows decoded from another format's blocks) are converted into memory owned here. A
 * quantized weight is quantized here, once for its three parts ({@link BlockQuantizer}), from
 * whatever the checkpoint has, or, from a GPTQ or AWQ
 * checkpoint, repacked from its own blocks ({@link CheckpointRepacker}). Everything is made in
 * native memory one checkpoint tensor at a time (no whole-model float or quantized copy on the
 * heap). ONNX Runtime copies the data while it creates the session, so these values (and the
 * memory made here) are closed right after.
 *
 * <p>Why this route: {@code AddInitializer} only replaces an initializer whose data the model
 * already holds (embedding every weight in the protobuf would copy it twice), and ONNX Runtime
 * rejects a data-less initializer; an external-data reference that no file holds, filled from
 * memory by {@code AddExternalInitializers} (API 12), is accepted, and the weights become real
 * initializers (MatMul and MatMulNBits pre-packing, constant folding).
 */
final class WeightTensors implements AutoCloseable {

  private final Arena converted;
  private final OrtValue[] values;
  private final long bytes;

  private WeightTensors(Arena converted, OrtValue[] values, long bytes) {
    this.converted = converted;
    this.values = values;
    this.bytes = bytes;
  }

  /**
   * @param tensors the checkpoint's tensors by name ({@code ModelWeights.tensors()})
   */
  static WeightTensors of(Map<String, Tensor> tensors, List<ExternalInitializer> initializers,
      MemoryInfo info) {
    Arena arena = Arena.ofShared();
    OrtValue[] values = new OrtValue[initializers.size()];
    long bytes = 0;
    try {
      MemorySegment[] data = materialize(tensors, initializers, arena);
      for (MemorySegment d : data) {
        bytes += d.byteSize();
      }
      for (int i = 0; i < values.length; i++) {
        ExternalInitializer init = initializers.get(i);
        values[i] = OrtValue.wrap(info, data[i], ElementType.ofCode(init.elemType()), init.dims());
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
    return new WeightTensors(arena, values, bytes);
  }

  /**
   * The data of every initializer, made straight into native memory one checkpoint tensor at a
   * time: a quantized weight's parts are written out right after it is quantized, so the heap
   * holds at most one tensor's blocks per worker, never the model's. Tensors run in parallel
   * over the common pool (at load the quantization is most of the start's extra time).
   */
  private static MemorySegment[] materialize(Map<String, Tensor> tensors,
      List<ExternalInitializer> initializers, Arena arena) {
    MemorySegment[] data = new MemorySegment[initializers.size()];
    Map<String, List<Integer>> partsOf = new LinkedHashMap<>();
    List<Runnable> tasks = new ArrayList<>();
    for (int i = 0; i < initializers.size(); i++) {
      ExternalInitializer init = initializers.get(i);
      int at = i;
      switch (init.source()) {
        case WeightSource.Dense d -> tasks.add(() -> data[at] = dense(tensor(tensors, d.tensor()),
            floatType(init.elemType()), arena));
        case WeightSource.Quantized q when q.part() == WeightSource.Part.INPUT_ORDER ->
            tasks.add(() -> data[at] = inputOrder(tensors, q, arena));
        case WeightSource.Quantized q ->
            partsOf.computeIfAbsent(q.tensor(), k -> new ArrayList<>()).add(i);
      }
    }
    partsOf.values().forEach(indices -> tasks.add(() -> {
      WeightSource.Quantized q = (WeightSource.Quantized) initializers.get(indices.getFirst())
          .source();
      QuantizedWeight w = quantize(tensors, q);
      for (int i : indices) {
        ExternalInitializer init = initializers.get(i);
        data[i] = part(w, ((WeightSource.Quantized) init.source()).part(),
            floatType(init.elemType()), arena);
      }
    }));
    tasks.parallelStream().forEach(Runnable::run);
    return data;
  }

  private static MemorySegment dense(Tensor t, GraphDtype type, Arena arena) {
    return type == GraphDtype.FLOAT32 ? fp32(t, arena) : convert(t, type, arena);
  }

  /** From the float weight ({@link BlockQuantizer}), or the checkpoint's own blocks repacked. */
  private static QuantizedWeight quantize(Map<String, Tensor> tensors, WeightSource.Quantized q) {
    CheckpointQuantization checkpoint = q.spec().checkpoint();
    if (checkpoint != null) {
      QuantizedWeight w = CheckpointRepacker.repack(checkpoint, CheckpointRepacker.moduleOf(q.tensor()),
          tensors);
      return q.outputOrder() == null ? w
          : w.outputsIn(CheckpointRepacker.inputOrder(checkpoint, q.outputOrder(), tensors));
    }
    return BlockQuantizer.quantize(tensor(tensors, q.tensor()), q.layout(),
        q.spec().mode().bits(), q.spec().blockSize(), q.spec().zeroPoints());
  }

  /** A GPTQ act-order layer's input order ({@link CheckpointRepacker#inputOrder}), int64. */
  private static MemorySegment inputOrder(Map<String, Tensor> tensors, WeightSource.Quantized q,
      Arena arena) {
    int[] order = CheckpointRepacker.inputOrder(q.spec().checkpoint(),
        CheckpointRepacker.moduleOf(q.tensor()), tensors);
    MemorySegment out = arena.allocate((long) order.length * Long.BYTES, 64);
    for (int i = 0; i < order.length; i++) {
      out.setAtIndex(ValueLayout.JAVA_LONG, i, order[i]);
    }
    return out;
  }

  private static Tensor tensor(Map<String, Tensor> tensors, String name) {
    Tensor t = tensors.get(name);
    if (t == null) {
      throw new IllegalArgumentException("no tensor named " + name);
    }
    return t;
  }

  private static MemorySegment fp32(Tensor t, Arena arena) {
    MemorySegment data = t.data();
    if (t.dtype() == DType.F32 && t.decoder() == null && data.isNative()
        && data.address() % Float.BYTES == 0) {
      return data;
    }
    long n = t.elementCount();
    MemorySegment copy = arena.allocate(n * Float.BYTES, 64);
    if (t.decoder() != null) {
      float[] row = new float[t.rowLength()];
      for (long r = 0; r < n / row.length; r++) {
        t.readRow(r, row);
        MemorySegment.copy(row, 0, copy, ValueLayout.JAVA_FLOAT, r * row.length * Float.BYTES,
            row.length);
      }
      return copy;
    }
    for (long k = 0; k < n; k++) {
      copy.setAtIndex(ValueLayout.JAVA_FLOAT, k, t.get(k));
    }
    return copy;
  }

  private static MemorySegment convert(Tensor t, GraphDtype dtype, Arena arena) {
    long n = t.elementCount();
    MemorySegment copy = arena.allocate(n * dtype.bytes(), 64);
    float[] row = new float[t.rowLength()];
    for (long r = 0; r < n / row.length; r++) {
      t.readRow(r, row);
      for (int i = 0; i < row.length; i++) {
        dtype.store(copy, r * row.length + i, row[i]);
      }
    }
    return copy;
  }

  /** @param scaleType the scales' type: A's, the graph's float type */
  private static MemorySegment part(QuantizedWeight w, WeightSource.Part part,
      GraphDtype scaleType, Arena arena) {
    return switch (part) {
      case WEIGHT -> arena.allocateFrom(ValueLayout.JAVA_BYTE, w.packed());
      case ZERO_POINTS -> w.zeroPoints() != null
          ? arena.allocateFrom(ValueLayout.JAVA_BYTE, w.zeroPoints())
          : defaultZeroPoints(w, arena);
      case SCALES -> {
        float[] scales = w.scales();
        MemorySegment out = arena.allocate((long) scales.length * scaleType.bytes(), 64);
        for (int i = 0; i < scales.length; i++) {
          scaleType.store(out, i, scales[i]);
        }
        yield out;
      }
      case INPUT_ORDER -> throw new IllegalStateException("an input order is no part of " + w);
    };
  }

  /**
   * A symmetric weight's zero points written out (2^(bits−1) in every block, packed as
   * MatMulNBits packs them): for an operator that is given them explicitly.
   */
  private static MemorySegment defaultZeroPoints(QuantizedWeight w, Arena arena) {
    long[] shape = w.zeroPointsShape();
    MemorySegment out = arena.allocate(shape[0] * shape[1], 64);
    byte fill = (byte) (w.bits() == 8 ? 0x80 : 0x88);
    out.fill(fill);
    return out;
  }

  /** The float type of ONNX code {@code elemType}; fp32 for the quantized bytes (unused). */
  private static GraphDtype floatType(int elemType) {
    for (GraphDtype t : GraphDtype.values()) {
      if (t.onnxType() == elemType) {
        return t;
      }
    }
    return GraphDtype.FLOAT32;
  }

  OrtValue[] values() {
    return values;
  }

  /** Bytes of data handed to ONNX Runtime (made here or wrapped in place). */
  long bytes() {
    return bytes;
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
