package dev.radixserve.model.graph;

import static dev.radixserve.model.graph.GraphBuilder.attr;

import dev.radixserve.model.GemmaConfig;
import dev.radixserve.model.quant.QuantSpec;
import dev.radixserve.model.quant.WeightLayout;
import dev.radixserve.model.weights.GemmaWeights;
import java.util.List;
import java.util.Map;

/**
 * The paged Gemma 2 / Gemma 3 (text) graph ({@link PagedGraph}'s contract, opset {@value #OPSET};
 * fp32, or fp16/bf16 as {@link GraphDtype} says), as {@link GemmaConfig} describes the family.
 * What differs from {@link PagedLlamaGraph} (vLLM's gemma2.py beside llama.py); the rest is the
 * shared pieces: {@link PagedIo}, {@link Linear}, {@link Rotary}.
 *
 * <pre>
 *   x = embed_tokens[ids] · sqrt(hidden)                   (the normalizer rounded to the dtype)
 *   per layer:
 *     a = rms(x, input_layernorm)
 *     q = q_proj(a), k = k_proj(a), v = v_proj(a)
 *     (Gemma 3: q, k = rms per head with q_norm / k_norm)
 *     q, k = rope of this layer's type(q, k)               before PagedAttention writes k
 *     o = PagedAttention(q, k, v; scale query_pre_attn_scalar^-0.5, soft-cap, window of a
 *         sliding layer)
 *     x += rms(o_proj(o), post_attention_layernorm)
 *     m = rms(x, pre_feedforward_layernorm)
 *     x += rms(down_proj(gelu_tanh(gate_proj(m)) * up_proj(m)), post_feedforward_layernorm)
 *   logits = lm_head(rms(x[logits_index], norm)), soft-capped by final_logit_softcapping
 *   rms(x, w) = x / sqrt(mean(x²) + eps) · (1 + w)        (fp32 inside)
 * </pre>
 *
 * Gemma's {@code 1 + w} is an Add of the checkpoint's {@code w} and 1 in the graph rather than
 * folded into the weights at load: the weights stay the mapped file (no copy, nothing rewritten
 * that a repacker, {@code describe} or a test would read under the checkpoint's name), and ONNX
 * Runtime folds the constant Add once when the session starts. In a 16-bit graph {@code 1 + w}
 * is rounded to that type, where transformers keeps it in fp32.
 */
public final class PagedGemmaGraph implements PagedGraph {

  public static final int OPSET = 17;

  private final GemmaConfig c;
  private GraphBuilder g;
  private PagedIo io;
  private Rotary rotary;

  public PagedGemmaGraph(GemmaConfig config) {
    this.c = config;
  }

  @Override
  public GemmaConfig shape() {
    return c;
  }

  @Override
  public Map<String, long[]> initializers() {
    return GemmaWeights.expectedShapes(c);
  }

  @Override
  public OnnxGraph build(int blockSize, GraphDtype dtype, QuantSpec quant, KvDtype kv) {
    g = new GraphBuilder(c.modelType() + "_paged");
    io = new PagedIo(g, c, blockSize, dtype, kv, initializers(), quant, ActOrder.NONE);
    rotary = new Rotary(g, io, c.headDim(), c.nPositions());
    // the table in the head's blocks when the head is quantized (a tied table once for both),
    // as the Llama graph gathers it: Gemma's 256k-row table is not widened to fp32
    String x = g.op("Mul", "embed_scaled", io.embed(GemmaWeights.EMBED, io.ids),
        g.scalar((float) Math.sqrt(c.hiddenSize()), dtype));
    for (int i = 0; i < c.nLayer(); i++) {
      x = block(i, x);
    }
    io.logitsAndOutputs(rmsNorm(io.gather(x, io.logitsIndex), "norm.weight"),
        GemmaWeights.lmHeadName(c), (float) c.finalSoftcap());
    return g.finish(OPSET, "radixserve");
  }

  private String block(int layer, String x) {
    String p = "layers." + layer + ".";
    String attn = attention(layer, rmsNorm(x, p + "input_layernorm.weight"));
    String o = linear(attn, p + "self_attn.o_proj", c.attentionBias());
    x = g.op("Add", "L" + layer + "_res1", x,
        rmsNorm(o, p + "post_attention_layernorm.weight"));
    String m = rmsNorm(x, p + "pre_feedforward_layernorm.weight");
    String down = linear(geGlu(p, m), p + "mlp.down_proj", false);
    return g.op("Add", "L" + layer + "_res2", x,
        rmsNorm(down, p + "post_feedforward_layernorm.weight"));
  }

  /** Layer {@code layer}'s q/k/v of the normed {@code a}, q/k norms, its rope, PagedAttention. */
  private String attention(int layer, String a) {
    String p = "layers." + layer + ".";
    String q = linear(a, p + "self_attn.q_proj", c.attentionBias());
    String k = linear(a, p + "self_attn.k_proj", c.attentionBias());
    String v = linear(a, p + "self_attn.v_proj", c.attentionBias());
    if (c.qkNorm()) {
      q = perHeadNorm(q, c.nHeads(), p + "self_attn.q_norm.weight");
      k = perHeadNorm(k, c.kvHeads(), p + "self_attn.k_norm.weight");
    }
    q = rotary.apply(q, c.nHeads(), c.rope(layer), "L" + layer + "_q_rope");
    k = rotary.apply(k, c.kvHeads(), c.rope(layer), "L" + layer + "_k_rope");
    return io.attention(layer, q, k, v, c.nHeads(),
        new AttentionSpec(c.attentionScale(), c.window(layer), (float) c.attnSoftcap()));
  }

  /** {@code gelu_tanh(gate_proj(m)) * up_proj(m)}, the input of down_proj. */
  private String geGlu(String p, String m) {
    return g.op("Mul", "geglu", geluTanh(linear(m, p + "mlp.gate_proj", false)),
        linear(m, p + "mlp.up_proj", false));
  }

  /**
   * {@code gelu_pytorch_tanh}: 0.5 x (1 + tanh(sqrt(2/π) (x + 0.044715 x³))), as plain operators
   * so that every graph dtype has it.
   */
  private String geluTanh(String x) {
    String cube = g.op("Mul", "x3", g.op("Mul", "x2", x, x), x);
    String poly = g.op("Add", "poly", x, g.op("Mul", "cx3", cube, g.scalar(0.044715f, io.dt)));
    String inner = g.op("Tanh", "tanh",
        g.op("Mul", "scaled", poly, g.scalar((float) Math.sqrt(2.0 / Math.PI), io.dt)));
    String half = g.op("Mul", "half_x", x, g.scalar(0.5f, io.dt));
    return g.op("Mul", "gelu", half, g.op("Add", "one_plus", inner, g.scalar(1f, io.dt)));
  }

  /** Gemma's RMSNorm of each head of a [T, heads*D] projection. */
  private String perHeadNorm(String x, int heads, String weight) {
    int d = c.headDim();
    String perHead = rmsNorm(g.op("Reshape", "heads", x, g.ints(-1, heads, d)), weight);
    return g.op("Reshape", "flat", perHead, g.ints(-1, (long) heads * d));
  }

  /**
   * Gemma's RMSNorm, x / sqrt(mean(x²) + eps) · (1 + w) over the last axis: ONNX Runtime's
   * {@code SimplifiedLayerNormalization} (fp32 inside) with the scale {@code 1 + w}.
   */
  private String rmsNorm(String x, String weight) {
    String scale = g.op("Add", "one_plus_w", weight, g.scalar(1f, io.dt));
    return g.op("SimplifiedLayerNormalization", "rmsnorm", List.of(x, scale),
        attr("axis", -1L), attr("epsilon", (float) c.rmsNormEps()));
  }

  /** nn.Linear: weight [out, in], so x · Wᵀ (+ b). */
  private String linear(String x, String prefix, boolean bias) {
    return io.linear(x, prefix + ".weight", WeightLayout.OUT_IN, bias ? prefix + ".bias" : null);
  }
}
