package dev.radixserve.model.graph;

import static dev.radixserve.model.graph.GraphBuilder.attr;

import dev.radixserve.model.LlamaConfig;
import dev.radixserve.model.weights.LlamaWeights;
import dev.radixserve.model.quant.QuantSpec;
import dev.radixserve.model.quant.WeightLayout;
import java.util.List;
import java.util.Map;

/**
 * The paged Llama-family graph ({@link PagedGraph}'s contract, opset {@value #OPSET}; fp32, or
 * fp16/bf16 as {@link GraphDtype} says):
 * Llama 3.x, SmolLM2, TinyLlama, Qwen2.5, Qwen3 and Mistral, as {@link LlamaConfig} describes
 * them. Initializers: every {@link LlamaWeights} tensor under its canonical name.
 *
 * <pre>
 *   x = embed_tokens[ids]                                              [T, E]
 *   per layer:
 *     a = rms(x, input_layernorm)
 *     q = q_proj(a) [T, H*D]   k = k_proj(a), v = v_proj(a) [T, KVH*D]
 *     (Qwen3: q, k = rms per head with q_norm / k_norm [D])
 *     q, k = rope(q, positions), rope(k, positions)    before PagedAttention writes k: the pool
 *                                                      holds rotated keys at absolute positions
 *     x += o_proj(PagedAttention(q, k, v))                             (GQA: H / KVH queries per kv head;
 *                                                      Mistral, Qwen2/3: a layer's sliding window)
 *     m = rms(x, post_attention_layernorm)
 *     x += down_proj(silu(gate_proj(m)) * up_proj(m))
 *   logits = lm_head(rms(x[logits_index], norm))                      [R, vocab]
 * </pre>
 *
 * Rotary ({@link Rotary}) reads cos/sin tables of [max_position_embeddings, D/2]. It is applied here,
 * before the attention node, rather than by PagedAttention's own {@code do_rotary}: the CPU
 * kernel stays family-agnostic and keys enter the pool already rotated.
 * Every projection goes through {@link #linear}, i.e. {@link Linear}: the one place a quantized
 * (MatMulNBits) or dense linear layer is emitted.
 */
public final class PagedLlamaGraph implements PagedGraph {

  public static final int OPSET = 17;

  private final LlamaConfig c;
  private final ActOrder actOrder;
  private GraphBuilder g;
  private PagedIo io;
  private Rotary rotary;

  public PagedLlamaGraph(LlamaConfig config) {
    this(config, ActOrder.NONE);
  }

  /** @param actOrder for a GPTQ act-order checkpoint: how its products get their inputs */
  public PagedLlamaGraph(LlamaConfig config, ActOrder actOrder) {
    this.c = config;
    this.actOrder = actOrder;
  }

  @Override
  public LlamaConfig shape() {
    return c;
  }

  @Override
  public Map<String, long[]> initializers() {
    return LlamaWeights.expectedShapes(c);
  }

  @Override
  public OnnxGraph build(int blockSize, GraphDtype dtype, QuantSpec quant, KvDtype kv) {
    g = new GraphBuilder(c.modelType() + "_paged");
    io = new PagedIo(g, c, blockSize, dtype, kv, initializers(), quant, actOrder);
    rotary = new Rotary(g, io, c.headDim(), c.nPositions());
    String x = io.embed(LlamaWeights.EMBED, io.ids);
    if (dtype == GraphDtype.FLOAT32) {
      fusedLayers(x);
    } else {
      for (int i = 0; i < c.nLayer(); i++) {
        x = block(i, x);
      }
      io.logitsAndOutputs(rmsNorm(io.gather(x, io.logitsIndex), "norm.weight"),
          LlamaWeights.lmHeadName(c));
    }
    return g.finish(OPSET, "radixserve");
  }

  /**
   * The fp32 layers with each residual add, the bias of the projection before it (if any) and
   * the RMSNorm after it as one {@code com.microsoft.SkipSimplifiedLayerNormalization}, which
   * also returns the sum (the next residual): as {@link PagedGpt2Graph}'s fused layers, fewer
   * operators per decode step and fewer passes over the prefill's activations. 16-bit graphs
   * keep the plain operators ({@link #block}).
   */
  private void fusedLayers(String embedded) {
    String residual = embedded;
    String a = rmsNorm(embedded, "layers.0.input_layernorm.weight");
    for (int i = 0; i < c.nLayer(); i++) {
      String p = "layers." + i + ".";
      String attn = attention(i, a);
      String[] mid = skipRmsNorm(linear(attn, p + "self_attn.o_proj", false), residual,
          p + "post_attention_layernorm.weight", c.oBias() ? p + "self_attn.o_proj.bias" : null);
      residual = mid[1];
      String down = linear(swiGlu(p, mid[0]), p + "mlp.down_proj", false);
      String downBias = c.mlpBias() ? p + "mlp.down_proj.bias" : null;
      if (i + 1 < c.nLayer()) {
        String[] next = skipRmsNorm(down, residual,
            "layers." + (i + 1) + ".input_layernorm.weight", downBias);
        a = next[0];
        residual = next[1];
      } else {
        // only the logits rows need the last residual and the final norm
        String[] last = skipRmsNorm(io.gather(down, io.logitsIndex),
            io.gather(residual, io.logitsIndex), "norm.weight", downBias);
        io.logitsAndOutputs(last[0], LlamaWeights.lmHeadName(c));
      }
    }
  }

  /**
   * {@code rms(x + skip + bias) · weight} and {@code x + skip + bias}, the next residual:
   * {@code SkipSimplifiedLayerNormalization}'s outputs 0 and 3.
   */
  private String[] skipRmsNorm(String x, String skip, String weight, String bias) {
    String out = g.fresh("rmsnorm_out");
    String sum = g.fresh("residual");
    List<String> inputs = bias == null ? List.of(x, skip, weight) : List.of(x, skip, weight, bias);
    g.node("SkipSimplifiedLayerNormalization", "com.microsoft",
        out + "/SkipSimplifiedLayerNormalization", inputs, List.of(out, "", "", sum),
        attr("epsilon", (float) c.rmsNormEps()));
    return new String[] {out, sum};
  }

  private String block(int layer, String x) {
    String p = "layers." + layer + ".";
    String attn = attention(layer, rmsNorm(x, p + "input_layernorm.weight"));
    x = g.op("Add", "L" + layer + "_res1", x, linear(attn, p + "self_attn.o_proj", c.oBias()));

    String m = rmsNorm(x, p + "post_attention_layernorm.weight");
    return g.op("Add", "L" + layer + "_res2", x,
        linear(swiGlu(p, m), p + "mlp.down_proj", c.mlpBias()));
  }

  /**
   * Layer {@code layer}'s q/k/v projections of the normed {@code a}, rotary, PagedAttention (over
   * the layer's sliding window, if it has one).
   */
  private String attention(int layer, String a) {
    String p = "layers." + layer + ".";
    String q = linear(a, p + "self_attn.q_proj", c.qkvBias());
    String k = linear(a, p + "self_attn.k_proj", c.qkvBias());
    String v = linear(a, p + "self_attn.v_proj", c.qkvBias());
    String qNorm = c.qkNorm() ? p + "self_attn.q_norm.weight" : null;
    String kNorm = c.qkNorm() ? p + "self_attn.k_norm.weight" : null;
    q = rotate(q, c.nHeads(), qNorm, "L" + layer + "_q_rope");
    k = rotate(k, c.kvHeads(), kNorm, "L" + layer + "_k_rope");
    AttentionSpec full = AttentionSpec.full(c.headDim());
    return io.attention(layer, q, k, v, c.nHeads(),
        new AttentionSpec(full.scale(), c.window(layer), 0f));
  }

  /** {@code silu(gate_proj(m)) * up_proj(m)}, the input of down_proj. */
  private String swiGlu(String p, String m) {
    String gate = linear(m, p + "mlp.gate_proj", c.mlpBias());
    String silu = g.op("Mul", "silu", gate, g.op("Sigmoid", "sigmoid", gate));
    return g.op("Mul", "swiglu", silu, linear(m, p + "mlp.up_proj", c.mlpBias()));
  }

  /** nn.Linear: weight [out, in], so x · Wᵀ (+ b). The one place projections are emitted. */
  private String linear(String x, String prefix, boolean bias) {
    return io.linear(x, prefix + ".weight", WeightLayout.OUT_IN, bias ? prefix + ".bias" : null);
  }


  /**
   * Hugging Face's RMSNorm, x / sqrt(mean(x²) + eps) · weight over the last axis, as ONNX
   * Runtime's one-node {@code SimplifiedLayerNormalization} (fp32 inside): the six-op pattern
   * cost a decode step one kernel launch per op.
   */
  private String rmsNorm(String x, String weight) {
    return g.op("SimplifiedLayerNormalization", "rmsnorm", List.of(x, weight),
        attr("axis", -1L), attr("epsilon", (float) c.rmsNormEps()));
  }

  /**
   * Rotary of a [T, heads*D] projection ({@link Rotary}), after the per-head RMSNorm when
   * {@code norm} names one.
   */
  private String rotate(String x, int heads, String norm, String name) {
    int d = c.headDim();
    if (norm != null) {
      String perHead = rmsNorm(g.op("Reshape", "heads", x, g.ints(-1, heads, d)), norm);
      x = g.op("Reshape", "flat", perHead, g.ints(-1, (long) heads * d));
    }
    return rotary.apply(x, heads, c.rope(), name);
  }
}
