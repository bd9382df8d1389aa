package dev.radixserve.model;

import dev.radixserve.model.graph.ExternalInitializer;
import dev.radixserve.model.graph.GraphDtype;
import dev.radixserve.model.graph.WeightSource;
import dev.radixserve.model.quant.BlockQuantizer;
import dev.radixserve.model.quant.CheckpointQuantization;
import dev.radixserve.model.quant.CheckpointRepacker;
import dev.radixserve.model.quant.OffsetWeight;
import dev.radixserve.model.quant.Q4KRepacker;
import dev.radixserve.model.quant.QuantizedWeight;
import dev.radixserve.model.weights.DType;
import dev.radixserve.model.weights.Tensor;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The data of every external initializer the graph declares, made from the checkpoint in the
 * type the graph declares (fp32, or its fp16/bf16, rounded to nearest even): a dense F32 weight
 * wanted as fp32 is handed over as it lies; others (F16, BF16, another type, rows decoded from
 * another format's blocks, a row at a time) are converted. A
 * quantized weight is quantized here, once for its parts ({@link BlockQuantizer}), from whatever
 * dtype the checkpoint has, or, from a GPTQ or AWQ checkpoint, repacked from its own blocks
 * ({@link CheckpointRepacker}), or from a GGUF file's Q4_K blocks, their codes and a float offset
 * per block ({@link Q4KRepacker}). Everything is made in native memory one checkpoint tensor at a
 * time (no whole-model float or quantized copy, on the heap or off it) and handed to a sink:
 * {@link WeightsFile} writes it into the file ONNX Runtime maps.
 */
final class WeightTensors {

  private WeightTensors() {}

  /**
   * Takes one initializer's data (by its index in the graph's list), valid during the call: native
   * memory, or a heap array's segment (quantized parts, fp32 scales).
   */
  interface Sink {
    void accept(int index, MemorySegment data);
  }

  /**
   * Makes every initializer's data and hands it to {@code sink}, straight in native memory one
   * checkpoint tensor at a time: a quantized weight's parts are made right after it is quantized,
   * in memory of the task's own that is freed once the sink has them, so neither the heap nor
   * native memory ever holds the model's worth. The checkpoint's pages a task read are dropped
   * from this process's resident set when it is done ({@link #release}). Tensors run in parallel
   * over the common pool (at load the quantization is most of the start's extra time); the sink
   * is called from those threads.
   */
  static void forEach(Map<String, Tensor> tensors, List<ExternalInitializer> initializers,
      Sink sink) {
    Map<String, List<Integer>> quantizedParts = new LinkedHashMap<>();
    List<Runnable> tasks = new ArrayList<>();
    for (int i = 0; i < initializers.size(); i++) {
      ExternalInitializer init = initializers.get(i);
      int at = i;
      switch (init.source()) {
        case WeightSource.Dense d -> {
          requireDeclaredShape(tensor(tensors, d.tensor()), init);
          tasks.add(() -> task(tensors, d.tensor(), arena -> sink.accept(at,
              dense(tensor(tensors, d.tensor()), floatType(init.elemType()), arena))));
        }
        case WeightSource.Table t -> tasks.add(() -> task(tensors, t.tensor(),
            arena -> sink.accept(at, floats(t.values(), floatType(init.elemType()), arena))));
        case WeightSource.Quantized q when q.part() == WeightSource.Part.INPUT_ORDER ->
            tasks.add(() -> task(tensors, q.tensor(),
                arena -> sink.accept(at, inputOrder(tensors, q, arena))));
        case WeightSource.Quantized q ->
            quantizedParts.computeIfAbsent(q.tensor(), k -> new ArrayList<>()).add(i);
      }
    }
    quantizedParts.forEach((name, indices) -> tasks.add(() -> task(tensors, name, arena -> {
      WeightSource.Quantized q = (WeightSource.Quantized) initializers.get(indices.getFirst())
          .source();
      OffsetWeight offsets = q.spec().checkpoint() != null && q.spec().checkpoint().offsets()
          ? Q4KRepacker.repack(tensor(tensors, q.tensor()), q.layout()) : null;
      QuantizedWeight w = offsets != null ? offsets.codes() : quantize(tensors, q);
      for (int i : indices) {
        ExternalInitializer init = initializers.get(i);
        WeightSource.Part part = ((WeightSource.Quantized) init.source()).part();
        GraphDtype type = floatType(init.elemType());
        sink.accept(i, part == WeightSource.Part.OFFSETS ? floats(offsets.offsets(), type, arena)
            : part(w, part, type, arena));
      }
    })));
    tasks.parallelStream().forEach(Runnable::run);
  }

  /**
   * A dense initializer is handed the tensor's elements in the order they lie, so the graph must
   * declare the tensor's own shape: the same count in another shape (a GPT-2 projection read as
   * llama.cpp's [out][in] where Conv1D's [in, out] is declared) would run, on wrong numbers.
   */
  private static void requireDeclaredShape(Tensor t, ExternalInitializer init) {
    if (!Arrays.equals(t.shape(), init.dims())) {
      throw new IllegalStateException("initializer " + init.name() + " is declared "
          + Arrays.toString(init.dims()) + ", but its tensor " + t.name() + " is "
          + Arrays.toString(t.shape()));
    }
  }

  /** Runs one tensor's work in an arena of its own, then frees it and drops the tensor's pages. */
  private static void task(Map<String, Tensor> tensors, String name,
      java.util.function.Consumer<Arena> work) {
    try (Arena arena = Arena.ofConfined()) {
      work.accept(arena);
    }
    release(tensors.get(name));
  }

  /**
   * Drops a memory-mapped tensor's pages from this process's resident set ({@code madvise
   * MADV_DONTNEED} through {@link MemorySegment#unload}): the file's pages stay in the page
   * cache, but a load no longer holds the whole checkpoint resident at its peak. Reading the
   * tensor again faults its pages back in.
   */
  private static void release(Tensor t) {
    if (t != null && t.data().isMapped()) {
      t.data().unload();
    }
  }

  private static MemorySegment dense(Tensor t, GraphDtype type, Arena arena) {
    return type == GraphDtype.FLOAT32 ? fp32(t, arena) : convert(t, type, arena);
  }

  /** From the float weight ({@link BlockQuantizer}), or the checkpoint's own blocks repacked. */
  private static QuantizedWeight quantize(Map<String, Tensor> tensors, WeightSource.Quantized q) {
    CheckpointQuantization checkpoint = q.spec().checkpoint();
    if (checkpoint != null) {
      QuantizedWeight w = CheckpointRepacker.repack(checkpoint,
          CheckpointRepacker.moduleOf(q.tensor()), q.layout(), tensors);
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
    // the arrays as they are: a native copy of each (faulted in, zeroed, copied, freed) was most
    // of a load's time beside the quantization itself (the sink copies them a slice at a time)
    return switch (part) {
      case WEIGHT -> MemorySegment.ofArray(w.packed());
      case ZERO_POINTS -> w.zeroPoints() != null
          ? MemorySegment.ofArray(w.zeroPoints())
          : defaultZeroPoints(w, arena);
      case SCALES -> floats(w.scales(), scaleType, arena);
      case INPUT_ORDER, OFFSETS -> throw new IllegalStateException("no part of " + w + ": "
          + part);
    };
  }

  /** {@code values} in {@code type} (scales, offsets: of A's type, the graph's float type). */
  private static MemorySegment floats(float[] values, GraphDtype type, Arena arena) {
    if (type == GraphDtype.FLOAT32) {
      return MemorySegment.ofArray(values); // native order, as GraphDtype.store writes them
    }
    MemorySegment out = arena.allocate((long) values.length * type.bytes(), 64);
    for (int i = 0; i < values.length; i++) {
      type.store(out, i, values[i]);
    }
    return out;
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
}
