package dev.radixserve.model.graph;

import static dev.radixserve.model.graph.GraphBuilder.INT64;

import java.util.ArrayList;
import java.util.List;

/**
 * Two tiny graphs that rewrite rows of every layer's KV cache in place, so a pool in device
 * memory is copied and cleared on the device (never through the host). Each cache output is bound
 * by the caller to its cache input's own buffer; {@code ScatterND} then writes only the addressed
 * rows (ONNX Runtime's CPU and CUDA kernels skip their input copy when input and output are one
 * buffer).
 *
 * <pre>
 *   copy  inputs  cache_{c} dtype [NB, B, H, D] (c = 0 .. 2L-1: key, value per layer)
 *                 src int64 [n, 2], dst int64 [n, 2]        (block, slot) pairs
 *         output  cache_out_{c} = ScatterND(cache_{c}, dst, GatherND(cache_{c}, src))
 *   zero  inputs  cache_{c}, rows int64 [n, 2], row_shape int64 [3] = (n, H, D)
 *         output  cache_out_{c} = ScatterND(cache_{c}, rows, Cast(Expand(0f, row_shape)))
 *   read  inputs  cache_{c}, block int64 [1]
 *         output  block_{c} dtype [1, B, H, D] = Gather(cache_{c}, block)     (not in place)
 *   write inputs  cache_{c}, block_index int64 [1, 1], block_{c} dtype [1, B, H, D]
 *         output  cache_out_{c} = ScatterND(cache_{c}, block_index, block_{c})
 * </pre>
 *
 * <p>Read and write move one whole block between the pool and buffers the caller binds (host
 * memory for the cache tiers below the pool): ONNX Runtime copies a bound host input up to the
 * device and a device output down into a bound host buffer, so the pool itself is never mapped.
 */
public final class BlockOpsGraph {

  public static final String SRC = "src";
  public static final String DST = "dst";
  public static final String ROWS = "rows";
  public static final String ROW_SHAPE = "row_shape";
  public static final String BLOCK = "block";
  public static final String BLOCK_INDEX = "block_index";

  private BlockOpsGraph() {}

  public static String cache(int c) {
    return "cache_" + c;
  }

  public static String cacheOut(int c) {
    return "cache_out_" + c;
  }

  /** The copy graph over {@code caches} caches of {@code [NB, blockSize, heads, headDim]}. */
  public static byte[] copy(int caches, int blockSize, int heads, int headDim, GraphDtype dtype) {
    GraphBuilder g = new GraphBuilder("kv_copy");
    String src = g.input(SRC, INT64, "n", 2);
    String dst = g.input(DST, INT64, "n", 2);
    for (int c = 0; c < caches; c++) {
      String cache = declare(g, c, blockSize, heads, headDim, dtype);
      String rows = g.op("GatherND", "rows", cache, src);
      g.node("ScatterND", "", "copy_" + c, List.of(cache, dst, rows), List.of(cacheOut(c)));
    }
    return g.model(17, "radixserve").toByteArray();
  }

  /** The zeroing graph over {@code caches} caches. */
  public static byte[] zero(int caches, int blockSize, int heads, int headDim, GraphDtype dtype) {
    GraphBuilder g = new GraphBuilder("kv_zero");
    String rows = g.input(ROWS, INT64, "n", 2);
    String shape = g.input(ROW_SHAPE, INT64, 3);
    // fp32 zeros cast to the cache type: Cast and fp32 Expand exist for every type on CPU and
    // CUDA, while ONNX Runtime's CPU Expand has no bf16 kernel
    String zeros = g.op("Expand", "zeros", g.scalar(0f), shape);
    if (dtype != GraphDtype.FLOAT32) {
      zeros = g.op("Cast", "zeros_" + dtype.settingName(), List.of(zeros),
          GraphBuilder.attr("to", (long) dtype.onnxType()));
    }
    for (int c = 0; c < caches; c++) {
      String cache = declare(g, c, blockSize, heads, headDim, dtype);
      g.node("ScatterND", "", "zero_" + c, List.of(cache, rows, zeros), List.of(cacheOut(c)));
    }
    return g.model(17, "radixserve").toByteArray();
  }

  /** Block {@code c}'s rows of one cache (c = 2 * layer for keys, + 1 for values). */
  public static String block(int c) {
    return "block_" + c;
  }

  /** The read graph: one block of every cache out, {@code block_c [1, B, H, D]}. */
  public static byte[] read(int caches, int blockSize, int heads, int headDim, GraphDtype dtype) {
    GraphBuilder g = new GraphBuilder("kv_read");
    String block = g.input(BLOCK, INT64, 1);
    for (int c = 0; c < caches; c++) {
      String cache = g.input(cache(c), dtype.onnxType(), "num_blocks", blockSize, heads, headDim);
      g.node("Gather", "", "read_" + c, List.of(cache, block), List.of(block(c)),
          GraphBuilder.attr("axis", 0L));
      g.declareOutput(block(c), dtype.onnxType(), 1, blockSize, heads, headDim);
    }
    return g.model(17, "radixserve").toByteArray();
  }

  /** The write graph: one block of every cache overwritten in place from {@code block_c}. */
  public static byte[] write(int caches, int blockSize, int heads, int headDim, GraphDtype dtype) {
    GraphBuilder g = new GraphBuilder("kv_write");
    String index = g.input(BLOCK_INDEX, INT64, 1, 1);
    for (int c = 0; c < caches; c++) {
      String cache = declare(g, c, blockSize, heads, headDim, dtype);
      String rows = g.input(block(c), dtype.onnxType(), 1, blockSize, heads, headDim);
      g.node("ScatterND", "", "write_" + c, List.of(cache, index, rows), List.of(cacheOut(c)));
    }
    return g.model(17, "radixserve").toByteArray();
  }

  /** Input names of the copy graph: src, dst, then the caches. */
  public static List<String> copyInputs(int caches) {
    return withCaches(List.of(SRC, DST), caches);
  }

  /** Input names of the zero graph: rows, row_shape, then the caches. */
  public static List<String> zeroInputs(int caches) {
    return withCaches(List.of(ROWS, ROW_SHAPE), caches);
  }

  public static List<String> outputs(int caches) {
    List<String> names = new ArrayList<>();
    for (int c = 0; c < caches; c++) {
      names.add(cacheOut(c));
    }
    return names;
  }

  private static List<String> withCaches(List<String> first, int caches) {
    List<String> names = new ArrayList<>(first);
    for (int c = 0; c < caches; c++) {
      names.add(cache(c));
    }
    return names;
  }

  private static String declare(GraphBuilder g, int c, int blockSize, int heads, int headDim,
      GraphDtype dtype) {
    String name = g.input(cache(c), dtype.onnxType(), "num_blocks", blockSize, heads, headDim);
    g.declareOutput(cacheOut(c), dtype.onnxType(), "num_blocks", blockSize, heads, headDim);
    return name;
  }
}
