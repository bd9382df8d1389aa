package dev.radixserve.model.graph;

import static dev.radixserve.model.graph.GraphBuilder.attr;

import dev.radixserve.model.LlamaConfig;
import dev.radixserve.model.weights.LlamaWeights;
import java.util.List;
import java.util.Map;

/**
 * The paged Llama-family graph ({@link PagedGraph}'s contract, fp32, opset {@value #OPSET}):
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
 *     x += o_proj(PagedAttention(q, k, v))                             (GQA: H / KVH queries per kv head)
 *     m = rms(x, post_attention_layernorm)
 *     x += down_proj(silu(gate_proj(m)) * up_proj(m))
 *   logits = lm_head(rms(x[logits_index], norm))                      [R, vocab]
 * </pre>
 *
 * Rotary is computed in the graph from {@code positions} (angles = position · inv_freq in fp32,
 * as Hugging Face computes them), not from a [max_positions, D/2] table: no 100k-row initializer.
 * Rotary is applied here, before the attention node, rather than by PagedAttention's own
 * {@code do_rotary}: the CPU kernel stays family-agnostic and keys enter the pool already rotated.
 * Every projection goes through {@link #linear}, the one place a quantized or half-precision
 * linear layer would be emitted.
 */
public final class PagedLlamaGraph implements PagedGraph {

  public static final int OPSET = 17;

  private final LlamaConfig c;
  private GraphBuilder g;
  private PagedIo io;
  private String cos;
  private String sin;

  public PagedLlamaGraph(LlamaConfig config) {
    this.c = config;
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
  public byte[] build(int blockSize) {
    g = new GraphBuilder(c.modelType() + "_paged");
    io = new PagedIo(g, c, blockSize, initializers());
    rotaryTables();
    String x = io.gather(LlamaWeights.EMBED, io.ids);
    for (int i = 0; i < c.nLayer(); i++) {
      x = block(i, x);
    }
    String normed = rmsNorm(io.gather(x, io.logitsIndex), "norm.weight");
    g.node("Gemm", "", "lm_head", List.of(normed, LlamaWeights.lmHeadName(c)), List.of(LOGITS),
        attr("transB", 1L));
    io.declareOutputs();
    return g.model(OPSET, "radixserve").toByteArray();
  }

  private String block(int layer, String x) {
    String p = "layers." + layer + ".";
    String a = rmsNorm(x, p + "input_layernorm.weight");
    String q = linear(a, p + "self_attn.q_proj", c.qkvBias());
    String k = linear(a, p + "self_attn.k_proj", c.qkvBias());
    String v = linear(a, p + "self_attn.v_proj", c.qkvBias());
    q = rotate(q, c.nHeads(), c.qkNorm() ? p + "self_attn.q_norm.weight" : null);
    k = rotate(k, c.kvHeads(), c.qkNorm() ? p + "self_attn.k_norm.weight" : null);
    String attn = io.attention(layer, q, k, v, c.nHeads());
    x = g.op("Add", "L" + layer + "_res1", x, linear(attn, p + "self_attn.o_proj", c.oBias()));

    String m = rmsNorm(x, p + "post_attention_layernorm.weight");
    String gate = linear(m, p + "mlp.gate_proj", c.mlpBias());
    String silu = g.op("Mul", "silu", gate, g.op("Sigmoid", "sigmoid", gate));
    String up = g.op("Mul", "swiglu", silu, linear(m, p + "mlp.up_proj", c.mlpBias()));
    return g.op("Add", "L" + layer + "_res2", x, linear(up, p + "mlp.down_proj", c.mlpBias()));
  }

  /** nn.Linear: weight [out, in], so x · Wᵀ (+ b). The one place projections are emitted. */
  private String linear(String x, String prefix, boolean bias) {
    List<String> inputs = bias
        ? List.of(x, prefix + ".weight", prefix + ".bias")
        : List.of(x, prefix + ".weight");
    return g.op("Gemm", prefix, inputs, attr("transB", 1L));
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

  /** cos and sin of position · inv_freq, [T, 1, D/2]: one pair for every layer and head. */
  private void rotaryTables() {
    double[] inv = c.rope().inverseFrequencies(c.headDim());
    float[] f = new float[inv.length];
    for (int i = 0; i < f.length; i++) {
      f[i] = (float) inv[i];
    }
    String pos = g.op("Cast", "pos_f", List.of(io.positions), attr("to", (long) GraphBuilder.FLOAT));
    String angles = g.op("Mul", "angles",                                               // [T, D/2]
        g.op("Unsqueeze", "pos_col", pos, g.ints(1)), g.floats(new long[] {1, f.length}, f));
    cos = g.op("Unsqueeze", "cos", g.op("Cos", "cos2", angles), g.ints(1));           // [T, 1, D/2]
    sin = g.op("Unsqueeze", "sin", g.op("Sin", "sin2", angles), g.ints(1));
  }

  /**
   * Rotary of a [T, heads*D] projection in Hugging Face's half-split layout ({@code
   * rotate_half}: pairs are (i, i + D/2)), after the per-head RMSNorm when {@code norm} names one.
   */
  private String rotate(String x, int heads, String norm) {
    int d = c.headDim();
    String perHead = g.op("Reshape", "heads", x, g.ints(-1, heads, d));             // [T, h, D]
    if (norm != null) {
      perHead = rmsNorm(perHead, norm);
    }
    String[] half = g.ops("Split", "halves", 2, List.of(perHead, g.ints(d / 2, d / 2)),
        attr("axis", 2L));
    String first = g.op("Sub", "rot1",
        g.op("Mul", "x1cos", half[0], cos), g.op("Mul", "x2sin", half[1], sin));
    String second = g.op("Add", "rot2",
        g.op("Mul", "x2cos", half[1], cos), g.op("Mul", "x1sin", half[0], sin));
    String rotated = g.op("Concat", "rotated", List.of(first, second), attr("axis", 2L));
    return g.op("Reshape", "flat", rotated, g.ints(-1, (long) heads * d));
  }
}
