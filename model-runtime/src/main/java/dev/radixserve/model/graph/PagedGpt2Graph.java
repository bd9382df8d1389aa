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
  private GraphBuilder g;
  private PagedIo io;

  public PagedGpt2Graph(ModelConfig config) {
    this.c = config;
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
  public OnnxGraph build(int blockSize, GraphDtype dtype, QuantSpec quant) {
    g = new GraphBuilder("gpt2_paged");
    io = new PagedIo(g, c, blockSize, dtype, initializers(), quant);
    String x = g.op("Add", "embed",
        io.gather("wte.weight", io.ids), io.gather("wpe.weight", io.positions));
    for (int i = 0; i < c.nLayer(); i++) {
      x = block(i, x);
    }
    String last = io.gather(x, io.logitsIndex);
    io.logitsAndOutputs(layerNorm(last, "ln_f"), GptWeights.lmHeadName(c));
    return g.finish(OPSET, "radixserve");
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
