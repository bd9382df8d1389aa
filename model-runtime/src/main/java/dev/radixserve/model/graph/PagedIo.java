package dev.radixserve.model.graph;

import static dev.radixserve.model.graph.GraphBuilder.FLOAT;
import static dev.radixserve.model.graph.GraphBuilder.INT32;
import static dev.radixserve.model.graph.GraphBuilder.INT64;
import static dev.radixserve.model.graph.GraphBuilder.attr;

import dev.radixserve.model.ModelShape;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What every family's paged graph shares: the {@link PagedGraph} inputs and outputs, the weights
 * as external initializers, and one {@code com.microsoft.PagedAttention} node per layer.
 */
final class PagedIo {

  final String ids;
  final String positions;
  final String tables;
  final String cuSeqlens;
  final String pastLens;
  final String logitsIndex;
  final String bounds;
  final GraphDtype dt;
  private final GraphBuilder g;
  private final ModelShape shape;
  private final int blockSize;

  /** Declares the step inputs, the caches and the weights on {@code g}. */
  PagedIo(GraphBuilder g, ModelShape shape, int blockSize, GraphDtype dtype,
      Map<String, long[]> weights) {
    if (blockSize <= 0) {
      throw new IllegalArgumentException("block size must be positive, got " + blockSize);
    }
    this.g = g;
    this.shape = shape;
    this.blockSize = blockSize;
    this.dt = dtype;
    ids = g.input(PagedGraph.INPUT_IDS, INT64, "T");
    positions = g.input(PagedGraph.POSITIONS, INT64, "T");
    tables = g.input(PagedGraph.BLOCK_TABLES, INT32, "S", "M");
    cuSeqlens = g.input(PagedGraph.CU_SEQLENS, INT32, "S_plus_1");
    pastLens = g.input(PagedGraph.PAST_LENS, INT32, "S");
    logitsIndex = g.input(PagedGraph.LOGITS_INDEX, INT64, "R");
    bounds = g.input(PagedGraph.ATTENTION_METADATA, INT32, 2);
    for (int i = 0; i < shape.nLayer(); i++) {
      g.input(PagedGraph.keyCache(i), dt.onnxType(), cacheDims());
      g.input(PagedGraph.valueCache(i), dt.onnxType(), cacheDims());
    }
    for (Map.Entry<String, long[]> w : weights.entrySet()) {
      long elements = 1;
      for (long dim : w.getValue()) {
        elements *= dim;
      }
      g.externalInitializer(w.getKey(), dt.onnxType(), w.getValue(), elements * dt.bytes());
    }
  }

  private Object[] cacheDims() {
    return new Object[] {"num_blocks", blockSize, shape.kvHeads(), shape.headDim()};
  }

  /**
   * Layer {@code layer}'s attention over the pool: q [T, H*D], k and v [T, KVH*D] (positions
   * already applied); writes k and v into the caches in place and returns the output [T, H*D].
   */
  String attention(int layer, String q, String k, String v, int queryHeads) {
    String out = "L" + layer + "_attn";
    List<String> inputs = new ArrayList<>(List.of(q, k, v, PagedGraph.keyCache(layer),
        PagedGraph.valueCache(layer), cuSeqlens, pastLens, tables));
    while (inputs.size() < PagedGraph.ATTENTION_METADATA_SLOT) {
      inputs.add(""); // cos/sin caches, slot_mapping, head_sink, q/k norms, k/v scales: absent
    }
    inputs.add(bounds);
    g.node("PagedAttention", "com.microsoft", "L" + layer + "/PagedAttention", inputs,
        List.of(out, PagedGraph.keyCacheOut(layer), PagedGraph.valueCacheOut(layer)),
        attr("num_heads", (long) queryHeads), attr("kv_num_heads", (long) shape.kvHeads()),
        attr("scale", (float) (1.0 / Math.sqrt(shape.headDim()))));
    return out;
  }

  /**
   * The LM head over the final hidden rows: {@code normed · headᵀ} as the graph's fp32
   * {@link PagedGraph#LOGITS} (cast up from a 16-bit graph: sampling reads them on the host); then
   * every output is declared.
   */
  void logitsAndOutputs(String normed, String head) {
    if (dt == GraphDtype.FLOAT32) {
      g.node("Gemm", "", "lm_head", List.of(normed, head), List.of(PagedGraph.LOGITS),
          attr("transB", 1L));
    } else {
      String low = g.op("Gemm", "lm_head", List.of(normed, head), attr("transB", 1L));
      g.node("Cast", "", "logits_to_fp32", List.of(low), List.of(PagedGraph.LOGITS),
          attr("to", (long) FLOAT));
    }
    g.declareOutput(PagedGraph.LOGITS, FLOAT, "R", shape.vocabSize());
    for (int i = 0; i < shape.nLayer(); i++) {
      g.declareOutput(PagedGraph.keyCacheOut(i), dt.onnxType(), cacheDims());
      g.declareOutput(PagedGraph.valueCacheOut(i), dt.onnxType(), cacheDims());
    }
  }

  /** Rows {@code indices} of {@code data} (axis 0). */
  String gather(String data, String indices) {
    return g.op("Gather", "gather", List.of(data, indices), attr("axis", 0L));
  }
}
