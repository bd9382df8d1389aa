package dev.radixserve.model.weights;

import dev.radixserve.model.GemmaConfig;
import dev.radixserve.model.GemmaConfig.LayerType;
import dev.radixserve.model.LlamaConfig;
import dev.radixserve.model.ModelWeights;
import dev.radixserve.model.graph.PagedGemmaGraph;
import dev.radixserve.model.quant.CheckpointQuantization;
import dev.radixserve.model.quant.WeightLayout;
import java.lang.foreign.Arena;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Gemma 2 / Gemma 3 (text) weights under Hugging Face's names without the {@code model.}
 * prefix, shapes checked against the config. As {@link LlamaWeights}, plus two norms per layer
 * and no MLP biases; every norm weight is Gemma's offset {@code w} (the norm scales by
 * {@code 1 + w}), kept as the file holds it.
 *
 * <pre>
 *   embed_tokens.weight                          [vocab, hidden]   (also the LM head when tied)
 *   layers.{i}.input_layernorm.weight            [hidden]
 *   layers.{i}.self_attn.q_proj.weight           [heads*D, hidden]   bias [heads*D] (attention_bias)
 *   layers.{i}.self_attn.k_proj.weight           [kv*D, hidden]      bias [kv*D]    (attention_bias)
 *   layers.{i}.self_attn.v_proj.weight           [kv*D, hidden]      bias [kv*D]    (attention_bias)
 *   layers.{i}.self_attn.q_norm.weight           [D]                                (Gemma 3)
 *   layers.{i}.self_attn.k_norm.weight           [D]                                (Gemma 3)
 *   layers.{i}.self_attn.o_proj.weight           [hidden, heads*D]   bias [hidden]  (attention_bias)
 *   layers.{i}.post_attention_layernorm.weight   [hidden]
 *   layers.{i}.pre_feedforward_layernorm.weight  [hidden]
 *   layers.{i}.mlp.gate_proj.weight              [inter, hidden]
 *   layers.{i}.mlp.up_proj.weight                [inter, hidden]
 *   layers.{i}.mlp.down_proj.weight              [hidden, inter]
 *   layers.{i}.post_feedforward_layernorm.weight [hidden]
 *   norm.weight                                  [hidden]
 *   lm_head.weight                               [vocab, hidden]   (only when untied)
 * </pre>
 */
public final class GemmaWeights extends TensorSet implements ModelWeights {

  public static final String EMBED = LlamaWeights.EMBED;
  public static final String LM_HEAD = LlamaWeights.LM_HEAD;

  private final GemmaConfig config;
  private final CheckpointQuantization quantization;

  /** @param arena owner of the tensors' memory, closed with these weights (may be null) */
  public GemmaWeights(GemmaConfig config, Map<String, Tensor> tensors, Arena arena) {
    this(config, null, tensors, arena);
  }

  /**
   * @param quantization the blocks the projections are stored in (a GGUF file's Q8_0/Q4_0,
   *     repacked when the session is made), or null for float weights
   * @param arena owner of the tensors' memory, closed with these weights (may be null)
   */
  public GemmaWeights(GemmaConfig config, CheckpointQuantization quantization,
      Map<String, Tensor> tensors, Arena arena) {
    super(tensors, CheckpointLayers.storedShapes(expectedShapes(config), quantization,
        CheckpointLayers.LAYER_PROJECTION, WeightLayout.OUT_IN),
        arena);
    this.config = config;
    this.quantization = quantization;
  }

  @Override
  public CheckpointQuantization checkpointQuantization() {
    return quantization;
  }

  public static String lmHeadName(GemmaConfig c) {
    return c.tieWordEmbeddings() ? EMBED : LM_HEAD;
  }

  /** Every canonical tensor name with the shape the config implies, in a stable order. */
  public static Map<String, long[]> expectedShapes(GemmaConfig c) {
    long e = c.hiddenSize();
    long q = (long) c.nHeads() * c.headDim();
    long kv = (long) c.kvHeads() * c.headDim();
    long inter = c.intermediateSize();
    boolean bias = c.attentionBias();
    Map<String, long[]> m = new LinkedHashMap<>();
    m.put(EMBED, new long[] {c.vocabSize(), e});
    for (int i = 0; i < c.nLayer(); i++) {
      String p = "layers." + i + ".";
      m.put(p + "input_layernorm.weight", new long[] {e});
      TensorSet.linear(m, p + "self_attn.q_proj", q, e, bias);
      TensorSet.linear(m, p + "self_attn.k_proj", kv, e, bias);
      TensorSet.linear(m, p + "self_attn.v_proj", kv, e, bias);
      if (c.qkNorm()) {
        m.put(p + "self_attn.q_norm.weight", new long[] {c.headDim()});
        m.put(p + "self_attn.k_norm.weight", new long[] {c.headDim()});
      }
      TensorSet.linear(m, p + "self_attn.o_proj", e, q, bias);
      m.put(p + "post_attention_layernorm.weight", new long[] {e});
      m.put(p + "pre_feedforward_layernorm.weight", new long[] {e});
      TensorSet.linear(m, p + "mlp.gate_proj", inter, e, false);
      TensorSet.linear(m, p + "mlp.up_proj", inter, e, false);
      TensorSet.linear(m, p + "mlp.down_proj", e, inter, false);
      m.put(p + "post_feedforward_layernorm.weight", new long[] {e});
    }
    m.put("norm.weight", new long[] {e});
    if (!c.tieWordEmbeddings()) {
      m.put(LM_HEAD, new long[] {c.vocabSize(), e});
    }
    return m;
  }


  @Override
  public GemmaConfig config() {
    return config;
  }

  @Override
  public PagedGemmaGraph graph() {
    return new PagedGemmaGraph(config);
  }

  /**
   * The family, sizes, soft-caps, and per layer type its layers, window and rope: what
   * {@code check-model} prints.
   */
  @Override
  public String describe() {
    GemmaConfig c = config;
    StringBuilder layers = new StringBuilder();
    for (LayerType t : LayerType.values()) {
      long n = c.layerTypes().stream().filter(t::equals).count();
      if (n == 0) {
        continue;
      }
      LlamaConfig.Rope r = c.rope().get(t);
      layers.append(String.format("%n%-11s %d %s layers%s, rope %s theta %s%s", "", n,
          t.hfName(), t == LayerType.SLIDING_ATTENTION ? " (window " + c.slidingWindow() + ")"
              : "", r.type(), r.theta(), r.type().equals("default") ? "" : " factor " + r.factor()));
    }
    return String.format("%s (Gemma %s): %d layers, %d heads, %d kv heads, head_dim %d,"
        + " hidden_size %d, intermediate_size %d, max_position_embeddings %d, vocab_size %d,"
        + " rms_norm_eps %s, query_pre_attn_scalar %s, attention soft-cap %s, final logit"
        + " soft-cap %s%s%s%nlm head     %s", c.modelType(),
        c.modelType().equals("gemma2") ? "2" : "3, text", c.nLayer(), c.nHeads(), c.kvHeads(),
        c.headDim(), c.hiddenSize(), c.intermediateSize(), c.nPositions(), c.vocabSize(),
        c.rmsNormEps(), c.queryPreAttnScalar(), cap(c.attnSoftcap()), cap(c.finalSoftcap()),
        c.attentionBias() ? ", q/k/v/o bias" : "", c.qkNorm() ? ", q/k norm" : "",
        c.tieWordEmbeddings() ? EMBED + " (tied)" : LM_HEAD + " (untied)") + layers
        + (quantization == null ? "" : String.format("%nquantized   %s",
            quantization.describeServed()));
  }

  private static String cap(double cap) {
    return cap == 0 ? "none" : String.valueOf(cap);
  }
}
