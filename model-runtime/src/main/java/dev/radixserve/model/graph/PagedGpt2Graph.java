package dev.radixserve.model.graph;

import static dev.radixserve.model.graph.GraphBuilder.attr;

import dev.radixserve.model.ModelConfig;
import dev.radixserve.model.quant.QuantSpec;
import dev.radixserve.model.quant.WeightLayout;
import dev.radixserve.model.weights.GptWeights;
import java.util.List;
import java.util.Map;

/**
 * The paged GPT-2 graph ({@link PagedGraph}'s contract, opset {@value #OPSET}; fp32, or fp16/bf16
 * as {@link GraphDtype} says): each layer's
 * attention is one {@code com.microsoft.PagedAttention} node that reads the KV pool where it lies
 * and writes the new tokens' keys and values into it in place. Initializers: every {@link
 * GptWeights} tensor under its canonical name, or for a quantized linear layer MatMulNBits'
 * three tensors instead of its weight ({@link Linear}).
 *
 * Per layer: {@code ln_1 → c_attn → split q|k|v [T, E] → PagedAttention → c_proj → + residual →
 * ln_2 → MLP → + residual}. {@code M} must cover every sequence's past and new tokens. Logits are
 * computed only at {@code logits_index} rows (the last new token of each sequence, or every token
 * of a sequence that asks for prompt logprobs).
 */
public final class PagedGpt2Graph implements PagedGraph {

  public static final int OPSET = 17;

  private final ModelConfig c;
  private final ActOrder actOrder;
  private GraphBuilder g;
  private PagedIo io;

  public PagedGpt2Graph(ModelConfig config) {
    this(config, ActOrder.NONE);
  }

  /** @param actOrder for a GPTQ act-order checkpoint: how its products get their inputs */
  public PagedGpt2Graph(ModelConfig config, ActOrder actOrder) {
    this.c = config;
    this.actOrder = actOrder;
  }

  @Override
  public ModelConfig shape() {
    return c;
  }

  @Override
  public Map<String, long[]> initializers() {
    return GptWeights.expectedShapes(c);
  }

  @Override
  public OnnxGraph build(int blockSize, GraphDtype dtype, QuantSpec quant, KvDtype kv) {
    g = new GraphBuilder("gpt2_paged");
    io = new PagedIo(g, c, blockSize, dtype, kv, initializers(), quant, actOrder);
    String x = g.op("Add", "embed",
        io.embed("wte.weight", io.ids), io.gather("wpe.weight", io.positions));
    if (dtype == GraphDtype.FLOAT32) {
      fusedLayers(x);
    } else {
      for (int i = 0; i < c.nLayer(); i++) {
        x = block(i, x);
      }
      String last = io.gather(x, io.logitsIndex);
      io.logitsAndOutputs(layerNorm(last, "ln_f"), GptWeights.lmHeadName(c));
    }
    return g.finish(OPSET, "radixserve");
  }

  /**
   * The fp32 layers with ONNX Runtime's fused CPU operators: each residual add, the bias of the
   * projection before it and the layer norm after it become one {@code SkipLayerNormalization}
   * (which also returns the sum, the next residual), and the MLP's bias and GELU one {@code
   * FastGelu} ({@code BiasGelu} for the erf form). A decode step is many small operators, each
   * with its own dispatch and pass over memory: this takes a layer from 23 nodes to 10 and the
   * prefill's activations through memory fewer times. ONNX Runtime's own fusions do not match
   * these patterns on 2-D [T, E] activations, so the graph names the fused operators itself.
   * 16-bit graphs keep the plain operators ({@link #block}): not every provider has the fused
   * ones in every 16-bit type.
   */
  private void fusedLayers(String embedded) {
    String residual = embedded;
    String a = layerNorm(embedded, "h.0.ln_1");
    for (int i = 0; i < c.nLayer(); i++) {
      String p = "h." + i + ".";
      int e = c.nEmbd();
      String qkv = linear(a, p + "attn.c_attn");
      String[] split = g.ops("Split", "L" + i + "_qkv", 3, List.of(qkv, g.ints(e, e, e)),
          attr("axis", 1L));
      String attn = io.attention(i, split[0], split[1], split[2], c.nHead());
      String[] mid = skipLayerNorm(unbiased(attn, p + "attn.c_proj"), residual, p + "ln_2",
          p + "attn.c_proj.bias");
      residual = mid[1];
      String up = fusedGelu(unbiased(mid[0], p + "mlp.c_fc"),
          io.bias(p + "mlp.c_fc.weight", WeightLayout.IN_OUT, p + "mlp.c_fc.bias"));
      String down = unbiased(up, p + "mlp.c_proj");
      if (i + 1 < c.nLayer()) {
        String[] next = skipLayerNorm(down, residual, "h." + (i + 1) + ".ln_1",
            p + "mlp.c_proj.bias");
        a = next[0];
        residual = next[1];
      } else {
        // only the logits rows need the last residual and ln_f
        String[] last = skipLayerNorm(io.gather(down, io.logitsIndex),
            io.gather(residual, io.logitsIndex), "ln_f", p + "mlp.c_proj.bias");
        io.logitsAndOutputs(last[0], GptWeights.lmHeadName(c));
      }
    }
  }

  /** {@code x · W} of a Conv1D without its bias (the fused operator after it adds it). */
  private String unbiased(String x, String prefix) {
    return io.linear(x, prefix + ".weight", WeightLayout.IN_OUT, null);
  }

  /**
   * {@code LayerNorm(x + skip + bias)} and {@code x + skip + bias} itself, the next residual:
   * {@code com.microsoft.SkipLayerNormalization}'s outputs 0 and 3.
   */
  private String[] skipLayerNorm(String x, String skip, String norm, String bias) {
    String out = g.fresh(norm + "_out");
    String sum = g.fresh(norm + "_residual");
    g.node("SkipLayerNormalization", "com.microsoft", out + "/SkipLayerNormalization",
        List.of(x, skip, norm + ".weight", norm + ".bias", bias), List.of(out, "", "", sum),
        attr("epsilon", (float) c.layerNormEpsilon()));
    return new String[] {out, sum};
  }

  /** {@code gelu(x + bias)}: FastGelu (the tanh form) or BiasGelu (the erf form). */
  private String fusedGelu(String x, String bias) {
    String op = switch (c.activationFunction()) {
      case "gelu_new", "gelu_pytorch_tanh" -> "FastGelu";
      case "gelu" -> "BiasGelu";
      default -> throw new IllegalArgumentException(
          "unsupported activation_function " + c.activationFunction() + " (gelu_new or gelu)");
    };
    String out = g.fresh("gelu");
    g.node(op, "com.microsoft", out + "/" + op, List.of(x, bias), List.of(out));
    return out;
  }

  private String block(int layer, String x) {
    String p = "h." + layer + ".";
    int e = c.nEmbd();
    String a = layerNorm(x, p + "ln_1");
    String qkv = linear(a, p + "attn.c_attn");
    String[] split = g.ops("Split", "L" + layer + "_qkv", 3, List.of(qkv, g.ints(e, e, e)),
        attr("axis", 1L));                                                      // [T, E] each
    String attn = io.attention(layer, split[0], split[1], split[2], c.nHead());
    x = g.op("Add", "L" + layer + "_res1", x, linear(attn, p + "attn.c_proj"));

    String m = layerNorm(x, p + "ln_2");
    String up = activation(linear(m, p + "mlp.c_fc"));
    return g.op("Add", "L" + layer + "_res2", x, linear(up, p + "mlp.c_proj"));
  }

  /** Conv1D: weight is [in, out], so x · W as is. */
  private String linear(String x, String prefix) {
    return io.linear(x, prefix + ".weight", WeightLayout.IN_OUT, prefix + ".bias");
  }

  private String layerNorm(String x, String prefix) {
    return g.op("LayerNormalization", prefix, List.of(x, prefix + ".weight", prefix + ".bias"),
        attr("axis", -1L), attr("epsilon", (float) c.layerNormEpsilon()));
  }

  private String activation(String x) {
    String half = g.op("Mul", "half_x", x, g.scalar(0.5f, io.dt));
    String inner;
    switch (c.activationFunction()) {
      case "gelu_new", "gelu_pytorch_tanh" -> {
        // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        String cube = g.op("Mul", "x3", g.op("Mul", "x2", x, x), x);
        String poly = g.op("Add", "poly", x, g.op("Mul", "cx3", cube, g.scalar(0.044715f, io.dt)));
        inner = g.op("Tanh", "tanh",
            g.op("Mul", "scaled", poly, g.scalar((float) Math.sqrt(2.0 / Math.PI), io.dt)));
      }
      case "gelu" -> inner = g.op("Erf", "erf", g.op("Mul", "x_sqrt2", x, g.scalar((float) (1.0 / Math.sqrt(2.0)), io.dt)));
      default -> throw new IllegalArgumentException(
          "unsupported activation_function " + c.activationFunction() + " (gelu_new or gelu)");
    }
    return g.op("Mul", "gelu", half, g.op("Add", "one_plus", inner, g.scalar(1f, io.dt)));
  }
}
