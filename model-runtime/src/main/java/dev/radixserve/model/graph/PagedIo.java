package dev.radixserve.model.graph;

import static dev.radixserve.model.graph.GraphBuilder.FLOAT;
import static dev.radixserve.model.graph.GraphBuilder.INT32;
import static dev.radixserve.model.graph.GraphBuilder.INT64;
import static dev.radixserve.model.graph.GraphBuilder.attr;

import ai.onnx.proto.OnnxMl.AttributeProto;
import dev.radixserve.model.ModelShape;
import dev.radixserve.model.quant.QuantSpec;
import dev.radixserve.model.quant.WeightLayout;
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
  /** What the caches hold: their element type and last dimension. */
  private final KvDtype kv;
  private final GraphBuilder g;
  private final ModelShape shape;
  private final int blockSize;
  private final Map<String, long[]> weights;
  private final Linear linear;
  /** The LM head's own: its mode may differ from the layers' (int4 layers, an int8 head). */
  private final Linear headLinear;
  private final boolean quantizeHead;

  /**
   * Declares the step inputs, the caches and the weights on {@code g}.
   *
   * @param actOrder GPTQ act-order: how the products get their inputs in order ({@link Linear})
   */
  PagedIo(GraphBuilder g, ModelShape shape, int blockSize, GraphDtype dtype, KvDtype kv,
      Map<String, long[]> weights, QuantSpec quant, ActOrder actOrder) {
    if (blockSize <= 0) {
      throw new IllegalArgumentException("block size must be positive, got " + blockSize);
    }
    this.g = g;
    this.shape = shape;
    this.blockSize = blockSize;
    this.dt = dtype;
    this.kv = kv;
    ids = g.input(PagedGraph.INPUT_IDS, INT64, "T");
    positions = g.input(PagedGraph.POSITIONS, INT64, "T");
    tables = g.input(PagedGraph.BLOCK_TABLES, INT32, "S", "M");
    cuSeqlens = g.input(PagedGraph.CU_SEQLENS, INT32, "S_plus_1");
    pastLens = g.input(PagedGraph.PAST_LENS, INT32, "S");
    logitsIndex = g.input(PagedGraph.LOGITS_INDEX, INT64, "R");
    bounds = g.input(PagedGraph.ATTENTION_METADATA, INT32, 2);
    for (int i = 0; i < shape.nLayer(); i++) {
      g.input(PagedGraph.keyCache(i), kv.onnxType(), cacheDims());
      g.input(PagedGraph.valueCache(i), kv.onnxType(), cacheDims());
    }
    // only the weights a node reads become initializers: a quantized layer reads its own
    g.offer(weights, dt.onnxType());
    this.weights = weights;
    this.linear = new Linear(g, quant, dt.onnxType(), actOrder, ids);
    this.headLinear = new Linear(g, quant.forHead(shape.hiddenSize()), dt.onnxType(),
        logitsIndex);
    this.quantizeHead = quant.lmHead();
  }

  /**
   * {@code x · W (+ b)} for the checkpoint weight {@code weight} stored in {@code layout}, through
   * {@link Linear}: MatMul/Gemm, or MatMulNBits when the quantization covers it.
   *
   * @param bias the bias tensor's name; null for none
   */
  String linear(String x, String weight, WeightLayout layout, String bias) {
    return linear.emit(x, weight, layout, weights.get(weight), bias, true);
  }

  /**
   * The bias of {@code weight} for an operator that adds it itself (a fused one), in the order
   * the weight writes its outputs ({@link Linear#bias}).
   */
  String bias(String weight, WeightLayout layout, String bias) {
    return linear.bias(weight, layout, bias, weights.get(bias)[0]);
  }

  private Object[] cacheDims() {
    return new Object[] {"num_blocks", blockSize, shape.kvHeads(),
        kv.cacheLastDim(shape.headDim())};
  }

  /**
   * Layer {@code layer}'s full attention over the pool, scaled by 1/sqrt(headDim): see
   * {@link #attention(int, String, String, String, int, AttentionSpec)}.
   */
  String attention(int layer, String q, String k, String v, int queryHeads) {
    return attention(layer, q, k, v, queryHeads, AttentionSpec.full(shape.headDim()));
  }

  /**
   * Layer {@code layer}'s attention over the pool: q [T, H*D], k and v [T, KVH*D] (positions
   * already applied); writes k and v into the caches in place and returns the output [T, H*D].
   * {@code spec} gives the scale, the sliding window and the soft cap. A windowed layer's node
   * reads only the blocks inside its window, but its blocks are written and kept like any other
   * layer's: the block table and the radix cache stay per sequence, not per layer.
   */
  String attention(int layer, String q, String k, String v, int queryHeads, AttentionSpec spec) {
    String out = "L" + layer + "_attn";
    List<String> inputs = new ArrayList<>(List.of(q, k, v, PagedGraph.keyCache(layer),
        PagedGraph.valueCache(layer), cuSeqlens, pastLens, tables));
    while (inputs.size() < PagedGraph.ATTENTION_METADATA_SLOT) {
      inputs.add(""); // cos/sin caches, slot_mapping, head_sink, q/k norms, k/v scales: absent
    }
    inputs.add(bounds);
    List<AttributeProto> attrs = new ArrayList<>(List.of(attr("num_heads", (long) queryHeads),
        attr("kv_num_heads", (long) shape.kvHeads()), attr("scale", spec.scale())));
    // only when set: a full-attention graph stays byte for byte what it was
    if (spec.slidingWindow() > 0) {
      attrs.add(attr("local_window_size", spec.localWindowSize()));
    }
    if (spec.softcap() > 0f) {
      attrs.add(attr("softcap", spec.softcap()));
    }
    g.node("PagedAttention", "com.microsoft", "L" + layer + "/PagedAttention", inputs,
        List.of(out, PagedGraph.keyCacheOut(layer), PagedGraph.valueCacheOut(layer)),
        attrs.toArray(AttributeProto[]::new));
    return out;
  }

  /**
   * The LM head over the final hidden rows: {@code normed · headᵀ} as the graph's fp32
   * {@link PagedGraph#LOGITS} (cast up from a 16-bit graph: sampling reads them on the host); then
   * every output is declared.
   */
  void logitsAndOutputs(String normed, String head) {
    logitsAndOutputs(normed, head, 0);
  }

  /**
   * As {@link #logitsAndOutputs(String, String)}, the logits soft-capped when {@code softcap} is
   * positive: {@code softcap · tanh(logits / softcap)}, in fp32 (Gemma's
   * {@code final_logit_softcapping}).
   */
  void logitsAndOutputs(String normed, String head, float softcap) {
    if (softcap > 0) {
      String low = headLinear.emit(normed, head, WeightLayout.OUT_IN, weights.get(head), null,
          quantizeHead);
      String raw = dt == GraphDtype.FLOAT32 ? low
          : g.op("Cast", "logits_fp32", List.of(low), attr("to", (long) FLOAT));
      String capped = g.op("Tanh", "logits_tanh",
          g.op("Div", "logits_scaled", raw, g.scalar(softcap)));
      g.node("Mul", "", "logits_softcap", List.of(capped, g.scalar(softcap)),
          List.of(PagedGraph.LOGITS));
      declareOutputs();
      return;
    }
    // the head is [vocab, hidden] (nn.Linear's layout, or the tied embedding): quantized only
    // with QuantSpec.lmHead, in its headMode
    if (dt == GraphDtype.FLOAT32) {
      headLinear.emitInto(PagedGraph.LOGITS, normed, head, WeightLayout.OUT_IN,
          weights.get(head), null, quantizeHead);
    } else {
      String low = headLinear.emit(normed, head, WeightLayout.OUT_IN, weights.get(head), null,
          quantizeHead);
      g.node("Cast", "", "logits_to_fp32", List.of(low), List.of(PagedGraph.LOGITS),
          attr("to", (long) FLOAT));
    }
    declareOutputs();
  }

  private void declareOutputs() {
    g.declareOutput(PagedGraph.LOGITS, FLOAT, "R", shape.vocabSize());
    for (int i = 0; i < shape.nLayer(); i++) {
      g.declareOutput(PagedGraph.keyCacheOut(i), kv.onnxType(), cacheDims());
      g.declareOutput(PagedGraph.valueCacheOut(i), kv.onnxType(), cacheDims());
    }
  }

  /**
   * The embedding rows of {@code ids} from {@code table} ([vocab, hidden]). When the LM head is
   * quantized the table is too, in the head's mode and blocks ({@link Linear#gatherRows}): a
   * tied table is then quantized once for both, and an embedding costs its quantized bytes
   * instead of 4 (or 2) per weight. Otherwise a plain Gather.
   */
  String embed(String table, String ids) {
    if (!quantizeHead) {
      return gather(table, ids);
    }
    return headLinear.gatherRows(table, weights.get(table), ids);
  }

  /** Rows {@code indices} of {@code data} (axis 0). */
  String gather(String data, String indices) {
    return g.op("Gather", "gather", List.of(data, indices), attr("axis", 0L));
  }
}
