package dev.radixserve.model.weights;

import dev.radixserve.model.LlamaConfig;
import dev.radixserve.model.ModelWeights;
import dev.radixserve.model.graph.PagedLlamaGraph;
import dev.radixserve.model.quant.CheckpointQuantization;
import dev.radixserve.model.quant.WeightLayout;
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
    return CheckpointLayers.storedShapes(expectedShapes(c), quantization,
        CheckpointLayers.LAYER_PROJECTION, WeightLayout.OUT_IN);
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
      TensorSet.linear(m, p + "self_attn.q_proj", q, e, c.qkvBias());
      TensorSet.linear(m, p + "self_attn.k_proj", kv, e, c.qkvBias());
      TensorSet.linear(m, p + "self_attn.v_proj", kv, e, c.qkvBias());
      if (c.qkNorm()) {
        m.put(p + "self_attn.q_norm.weight", new long[] {c.headDim()});
        m.put(p + "self_attn.k_norm.weight", new long[] {c.headDim()});
      }
      TensorSet.linear(m, p + "self_attn.o_proj", e, q, c.oBias());
      m.put(p + "post_attention_layernorm.weight", new long[] {e});
      TensorSet.linear(m, p + "mlp.gate_proj", inter, e, c.mlpBias());
      TensorSet.linear(m, p + "mlp.up_proj", inter, e, c.mlpBias());
      TensorSet.linear(m, p + "mlp.down_proj", e, inter, c.mlpBias());
    }
    m.put("norm.weight", new long[] {e});
    if (!c.tieWordEmbeddings()) {
      m.put(LM_HEAD, new long[] {c.vocabSize(), e});
    }
    return m;
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
   * write their outputs (and add their biases, under {@code mlp_bias}) in its input order and
   * SwiGLU is elementwise.
   */
  @Override
  public PagedLlamaGraph graph() {
    if (quantization == null || !quantization.actOrder()) {
      return new PagedLlamaGraph(config);
    }
    CheckpointLayers.ActOrderPlanner plan =
        new CheckpointLayers.ActOrderPlanner(quantization, tensors());
    for (int i = 0; i < config.nLayer(); i++) {
      String p = "layers." + i + ".";
      plan.share(p + "self_attn.q_proj", p + "self_attn.k_proj", p + "self_attn.v_proj");
      plan.share(p + "self_attn.o_proj");
      plan.share(p + "mlp.gate_proj", p + "mlp.up_proj");
      String down = p + "mlp.down_proj";
      if (plan.inPlace(down)) {
        plan.share(down);
      } else {
        plan.outputsInOrderOf(down, p + "mlp.gate_proj", p + "mlp.up_proj");
      }
    }
    return new PagedLlamaGraph(config, plan.plan());
  }

  @Override
  public String describe() {
    LlamaConfig c = config;
    LlamaConfig.Rope r = c.rope();
    return String.format("%s: %d layers, %d heads, %d kv heads, head_dim %d, hidden_size %d,"
        + " intermediate_size %d, max_position_embeddings %d, vocab_size %d, rms_norm_eps %s,"
        + " rope %s theta %s%s%s%s%s%nlm head     %s", c.modelType(), c.nLayer(), c.nHeads(),
        c.kvHeads(), c.headDim(), c.hiddenSize(), c.intermediateSize(), c.nPositions(),
        c.vocabSize(), c.rmsNormEps(), r.type(), r.theta(),
        r.type().equals("default") ? "" : " factor " + r.factor()
            + (r.originalMaxPositions() > 0 ? " original_max_position_embeddings "
                + r.originalMaxPositions() : "")
            + (r.attentionFactor() != 1 ? " attention_factor " + r.attentionFactor() : "")
            + (r.partialRotaryFactor() != 1 ? " partial_rotary_factor "
                + r.partialRotaryFactor() : ""),
        c.slidingWindows().isEmpty() ? "" : ", sliding window " + c.slidingWindows(),
        c.qkvBias() ? ", q/k/v bias" : "", c.qkNorm() ? ", q/k norm" : "",
        c.tieWordEmbeddings() ? EMBED + " (tied)" : LM_HEAD + " (untied)")
        + (quantization == null ? "" : String.format("%nquantized   %s",
            quantization.describeServed()));
  }
}
