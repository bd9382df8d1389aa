package dev.radixserve.model.weights;

import dev.radixserve.model.LlamaConfig;
import dev.radixserve.model.ModelWeights;
import dev.radixserve.model.graph.ActOrder;
import dev.radixserve.model.graph.PagedLlamaGraph;
import dev.radixserve.model.quant.CheckpointQuantization;
import dev.radixserve.model.quant.CheckpointRepacker;
import java.lang.foreign.Arena;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Llama-family weights under Hugging Face's names without the {@code model.} prefix, shapes
 * checked against the config. nn.Linear layout: weights are {@code [out, in]}.
 *
 * <pre>
 *   embed_tokens.weight                        [vocab, hidden]   (also the LM head when tied)
 *   layers.{i}.input_layernorm.weight          [hidden]
 *   layers.{i}.self_attn.q_proj.weight         [heads*D, hidden]     bias [heads*D]   (qkvBias)
 *   layers.{i}.self_attn.k_proj.weight         [kv*D, hidden]        bias [kv*D]      (qkvBias)
 *   layers.{i}.self_attn.v_proj.weight         [kv*D, hidden]        bias [kv*D]      (qkvBias)
 *   layers.{i}.self_attn.q_norm.weight         [D]                                    (qkNorm)
 *   layers.{i}.self_attn.k_norm.weight         [D]                                    (qkNorm)
 *   layers.{i}.self_attn.o_proj.weight         [hidden, heads*D]     bias [hidden]    (oBias)
 *   layers.{i}.post_attention_layernorm.weight [hidden]
 *   layers.{i}.mlp.gate_proj.weight            [inter, hidden]       bias [inter]     (mlpBias)
 *   layers.{i}.mlp.up_proj.weight              [inter, hidden]       bias [inter]     (mlpBias)
 *   layers.{i}.mlp.down_proj.weight            [hidden, inter]       bias [hidden]    (mlpBias)
 *   norm.weight                                [hidden]
 *   lm_head.weight                             [vocab, hidden]   (only when untied)
 * </pre>
 */
public final class LlamaWeights extends TensorSet implements ModelWeights {

  public static final String EMBED = "embed_tokens.weight";
  public static final String LM_HEAD = "lm_head.weight";

  private final LlamaConfig config;
  private final CheckpointQuantization quantization;

  /** @param arena owner of the tensors' memory, closed with these weights (may be null) */
  public LlamaWeights(LlamaConfig config, Map<String, Tensor> tensors, Arena arena) {
    this(config, null, tensors, arena);
  }

  /**
   * @param quantization the checkpoint's GPTQ/AWQ quantization (its projections are stored as
   *     {@link #storedShapes}), or null for float weights
   * @param arena owner of the tensors' memory, closed with these weights (may be null)
   */
  public LlamaWeights(LlamaConfig config, CheckpointQuantization quantization,
      Map<String, Tensor> tensors, Arena arena) {
    super(tensors, storedShapes(config, quantization), arena);
    this.config = config;
    this.quantization = quantization;
  }

  /**
   * The tensors a checkpoint stores, with their shapes: {@link #expectedShapes}, except that
   * under a GPTQ/AWQ {@code quantization} each projection's {@code .weight} is its packed
   * tensors ({@link CheckpointQuantization#tensorShapes}; biases, norms, the embedding and the
   * LM head stay floats).
   *
   * @throws IllegalArgumentException when a projection's width does not fit the format
   */
  public static Map<String, long[]> storedShapes(LlamaConfig c,
      CheckpointQuantization quantization) {
    Map<String, long[]> graph = expectedShapes(c);
    if (quantization == null) {
      return graph;
    }
    Map<String, long[]> m = new LinkedHashMap<>();
    graph.forEach((name, shape) -> {
      if (name.startsWith("layers.") && name.endsWith("_proj.weight")) {
        String module = name.substring(0, name.length() - ".weight".length());
        m.putAll(quantization.tensorShapes(module, shape[1], shape[0]));
      } else {
        m.put(name, shape);
      }
    });
    return m;
  }

  @Override
  public CheckpointQuantization checkpointQuantization() {
    return quantization;
  }

  public static String lmHeadName(LlamaConfig c) {
    return c.tieWordEmbeddings() ? EMBED : LM_HEAD;
  }

  /** Every canonical tensor name with the shape the config implies, in a stable order. */
  public static Map<String, long[]> expectedShapes(LlamaConfig c) {
    long e = c.hiddenSize();
    long q = (long) c.nHeads() * c.headDim();
    long kv = (long) c.kvHeads() * c.headDim();
    long inter = c.intermediateSize();
    Map<String, long[]> m = new LinkedHashMap<>();
    m.put(EMBED, new long[] {c.vocabSize(), e});
    for (int i = 0; i < c.nLayer(); i++) {
      String p = "layers." + i + ".";
      m.put(p + "input_layernorm.weight", new long[] {e});
      linear(m, p + "self_attn.q_proj", q, e, c.qkvBias());
      linear(m, p + "self_attn.k_proj", kv, e, c.qkvBias());
      linear(m, p + "self_attn.v_proj", kv, e, c.qkvBias());
      if (c.qkNorm()) {
        m.put(p + "self_attn.q_norm.weight", new long[] {c.headDim()});
        m.put(p + "self_attn.k_norm.weight", new long[] {c.headDim()});
      }
      linear(m, p + "self_attn.o_proj", e, q, c.oBias());
      m.put(p + "post_attention_layernorm.weight", new long[] {e});
      linear(m, p + "mlp.gate_proj", inter, e, c.mlpBias());
      linear(m, p + "mlp.up_proj", inter, e, c.mlpBias());
      linear(m, p + "mlp.down_proj", e, inter, c.mlpBias());
    }
    m.put("norm.weight", new long[] {e});
    if (!c.tieWordEmbeddings()) {
      m.put(LM_HEAD, new long[] {c.vocabSize(), e});
    }
    return m;
  }

  private static void linear(Map<String, long[]> m, String prefix, long out, long in,
      boolean bias) {
    m.put(prefix + ".weight", new long[] {out, in});
    if (bias) {
      m.put(prefix + ".bias", new long[] {out});
    }
  }

  @Override
  public LlamaConfig config() {
    return config;
  }

  /**
   * The graph; for a GPTQ act-order checkpoint, with the gathers that put each product's inputs
   * in group order planned ({@link ActOrder}): none for a layer whose groups are runs of
   * consecutive inputs already; one for q/k/v (and one for gate/up), since GPTQ quantizes them
   * from the same inputs' Hessian, so their orders agree; and none for down_proj, since gate/up
   * write their outputs in its input order and SwiGLU is elementwise (unless an MLP bias,
   * which stays in the checkpoint's order, follows them).
   */
  @Override
  public PagedLlamaGraph graph() {
    if (quantization == null || !quantization.actOrder()) {
      return new PagedLlamaGraph(config);
    }
    Map<String, String> owners = new LinkedHashMap<>();
    Map<String, String> outputOrders = new LinkedHashMap<>();
    for (int i = 0; i < config.nLayer(); i++) {
      String p = "layers." + i + ".";
      shareOrders(owners, p + "self_attn.q_proj", p + "self_attn.k_proj", p + "self_attn.v_proj");
      shareOrders(owners, p + "self_attn.o_proj");
      shareOrders(owners, p + "mlp.gate_proj", p + "mlp.up_proj");
      String down = p + "mlp.down_proj";
      if (CheckpointRepacker.inPlace(CheckpointRepacker.inputOrder(quantization, down, tensors()))) {
        owners.put(down + ".weight", ActOrder.IN_ORDER);
      } else if (!config.mlpBias()) {
        owners.put(down + ".weight", ActOrder.IN_ORDER);
        outputOrders.put(p + "mlp.gate_proj.weight", down);
        outputOrders.put(p + "mlp.up_proj.weight", down);
      }
    }
    return new PagedLlamaGraph(config, new ActOrder(owners, outputOrders));
  }

  /**
   * Each of {@code modules} (projections of one input): needing no gather when its order leaves
   * every input in place, else sharing the gather of an earlier one with the same order.
   */
  private void shareOrders(Map<String, String> owners, String... modules) {
    java.util.List<int[]> orders = new java.util.ArrayList<>();
    for (String m : modules) {
      int[] order = CheckpointRepacker.inputOrder(quantization, m, tensors());
      if (CheckpointRepacker.inPlace(order)) {
        owners.put(m + ".weight", ActOrder.IN_ORDER);
      }
      for (int j = 0; j < orders.size() && !owners.containsKey(m + ".weight"); j++) {
        if (java.util.Arrays.equals(orders.get(j), order)) {
          owners.put(m + ".weight", modules[j] + ".weight");
        }
      }
      orders.add(order);
    }
  }

  @Override
  public String describe() {
    LlamaConfig c = config;
    LlamaConfig.Rope r = c.rope();
    return String.format("%s: %d layers, %d heads, %d kv heads, head_dim %d, hidden_size %d,"
        + " intermediate_size %d, max_position_embeddings %d, vocab_size %d, rms_norm_eps %s,"
        + " rope %s theta %s%s%s%s%nlm head     %s", c.modelType(), c.nLayer(), c.nHeads(),
        c.kvHeads(), c.headDim(), c.hiddenSize(), c.intermediateSize(), c.nPositions(),
        c.vocabSize(), c.rmsNormEps(), r.type(), r.theta(),
        r.type().equals("default") ? "" : " factor " + r.factor(),
        c.qkvBias() ? ", q/k/v bias" : "", c.qkNorm() ? ", q/k norm" : "",
        c.tieWordEmbeddings() ? EMBED + " (tied)" : LM_HEAD + " (untied)")
        + (quantization == null ? "" : String.format("%nquantized   %s (the checkpoint's own"
            + " blocks)", quantization.describe()));
  }
}
