package dev.radixserve.model.graph;

import static dev.radixserve.model.graph.GraphBuilder.FLOAT;
import static dev.radixserve.model.graph.GraphBuilder.INT32;
import static dev.radixserve.model.graph.GraphBuilder.INT64;
import static dev.radixserve.model.graph.GraphBuilder.attr;

import dev.radixserve.model.ModelConfig;
import dev.radixserve.model.weights.GptWeights;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The paged GPT-2 graph (DESIGN.md's graph contract, opset {@value #OPSET}; fp32, or fp16/bf16 as
 * {@link GraphDtype} says): each layer's
 * attention is one {@code com.microsoft.PagedAttention} node that reads the KV pool where it lies
 * and writes the new tokens' keys and values into it in place.
 *
 * <pre>
 *   inputs        input_ids int64 [T]   positions int64 [T]   block_tables int32 [S, M]
 *                 cu_seqlens int32 [S+1]   past_lens int32 [S]   logits_index int64 [R]
 *                 attention_metadata int32 [2] (host memory)
 *                 key_cache_{i}, value_cache_{i} dtype [NB, B, H, D]        (per layer)
 *   initializers  every GptWeights tensor under its canonical name, float, external data
 *                 supplied by the runner at session creation (AddExternalInitializers)
 *   outputs       logits float [R, vocab]
 *                 key_cache_out_{i}, value_cache_out_{i}: the caches, bound by the runner to the
 *                 very buffers of key_cache_{i} / value_cache_{i} (updated in place)
 * </pre>
 *
 * Per layer: {@code ln_1 → c_attn → split q|k|v [T, E] → PagedAttention → c_proj → + residual →
 * ln_2 → MLP → + residual}. {@code M} must cover every sequence's past and new tokens. Logits are
 * computed only at {@code logits_index} rows (the last new token of each sequence, or every token
 * of a sequence that asks for prompt logprobs).
 */
public final class PagedGpt2Graph {

  public static final int OPSET = 17;
  public static final String INPUT_IDS = "input_ids";
  public static final String POSITIONS = "positions";
  public static final String BLOCK_TABLES = "block_tables";
  public static final String CU_SEQLENS = "cu_seqlens";
  public static final String PAST_LENS = "past_lens";
  public static final String LOGITS_INDEX = "logits_index";
  /**
   * int32 [2] in host memory: upper bounds of any sequence's new tokens and of past + new tokens
   * this step (0: unknown). ONNX Runtime's CUDA kernel sizes its launch from them instead of
   * reading the lengths back from the device once per layer; the CPU kernel ignores them.
   */
  public static final String ATTENTION_METADATA = "attention_metadata";
  /** Position of {@code attention_metadata} among PagedAttention's inputs (ONNX Runtime 1.29). */
  public static final int ATTENTION_METADATA_SLOT = 16;
  public static final String LOGITS = "logits";

  private final ModelConfig c;
  private final int blockSize;
  private final GraphDtype dt;
  private final GraphBuilder g = new GraphBuilder("gpt2_paged");

  private PagedGpt2Graph(ModelConfig config, int blockSize, GraphDtype dtype) {
    this.c = config;
    this.blockSize = blockSize;
    this.dt = dtype;
  }

  public static String keyCache(int layer) {
    return "key_cache_" + layer;
  }

  public static String valueCache(int layer) {
    return "value_cache_" + layer;
  }

  public static String keyCacheOut(int layer) {
    return "key_cache_out_" + layer;
  }

  public static String valueCacheOut(int layer) {
    return "value_cache_out_" + layer;
  }

  /** The seven per-step inputs, in the order {@link #inputNames} lists them first. */
  public static List<String> stepInputNames() {
    return List.of(INPUT_IDS, POSITIONS, BLOCK_TABLES, CU_SEQLENS, PAST_LENS, LOGITS_INDEX,
        ATTENTION_METADATA);
  }

  /** Every input: step inputs, then key/value cache per layer. */
  public static List<String> inputNames(ModelConfig config) {
    List<String> names = new ArrayList<>(stepInputNames());
    for (int i = 0; i < config.nLayer(); i++) {
      names.add(keyCache(i));
      names.add(valueCache(i));
    }
    return names;
  }

  /** {@code logits}, then the key and value cache outputs per layer. */
  public static List<String> outputNames(ModelConfig config) {
    List<String> names = new ArrayList<>();
    names.add(LOGITS);
    for (int i = 0; i < config.nLayer(); i++) {
      names.add(keyCacheOut(i));
      names.add(valueCacheOut(i));
    }
    return names;
  }

  /** The weights the session must be given as external initializers, in a stable order. */
  public static List<String> initializerNames(ModelConfig config) {
    return List.copyOf(GptWeights.expectedShapes(config).keySet());
  }

  /** The serialized fp32 ModelProto for this config and block size. */
  public static byte[] build(ModelConfig config, int blockSize) {
    return build(config, blockSize, GraphDtype.FLOAT32);
  }

  /**
   * The serialized ModelProto computing in {@code dtype}: weights, activations and KV caches of
   * that type, logits cast to fp32 at the end.
   */
  public static byte[] build(ModelConfig config, int blockSize, GraphDtype dtype) {
    if (blockSize <= 0) {
      throw new IllegalArgumentException("block size must be positive, got " + blockSize);
    }
    return new PagedGpt2Graph(config, blockSize, dtype).assemble().toByteArray();
  }

  private ai.onnx.proto.OnnxMl.ModelProto assemble() {
    int h = c.nHead();
    int d = c.headDim();
    String ids = g.input(INPUT_IDS, INT64, "T");
    String pos = g.input(POSITIONS, INT64, "T");
    String tables = g.input(BLOCK_TABLES, INT32, "S", "M");
    String cu = g.input(CU_SEQLENS, INT32, "S_plus_1");
    String past = g.input(PAST_LENS, INT32, "S");
    String logitsIndex = g.input(LOGITS_INDEX, INT64, "R");
    String bounds = g.input(ATTENTION_METADATA, INT32, 2);
    int f = dt.onnxType();
    for (int i = 0; i < c.nLayer(); i++) {
      g.input(keyCache(i), f, "num_blocks", blockSize, h, d);
      g.input(valueCache(i), f, "num_blocks", blockSize, h, d);
    }
    for (Map.Entry<String, long[]> w : GptWeights.expectedShapes(c).entrySet()) {
      long elements = 1;
      for (long dim : w.getValue()) {
        elements *= dim;
      }
      g.externalInitializer(w.getKey(), f, w.getValue(), elements * dt.bytes());
    }

    String x = g.op("Add", "embed",
        gather("wte.weight", ids), gather("wpe.weight", pos));
    for (int i = 0; i < c.nLayer(); i++) {
      x = block(i, x, cu, past, tables, bounds);
    }
    String last = gather(x, logitsIndex);
    String normed = layerNorm(last, "ln_f");
    if (dt == GraphDtype.FLOAT32) {
      g.node("Gemm", "", "lm_head", List.of(normed, GptWeights.lmHeadName(c)), List.of(LOGITS),
          attr("transB", 1L));
    } else {
      String low = g.op("Gemm", "lm_head", List.of(normed, GptWeights.lmHeadName(c)),
          attr("transB", 1L));
      g.node("Cast", "", "logits_to_fp32", List.of(low), List.of(LOGITS),
          attr("to", (long) FLOAT));
    }
    g.declareOutput(LOGITS, FLOAT, "R", c.vocabSize());
    for (int i = 0; i < c.nLayer(); i++) {
      g.declareOutput(keyCacheOut(i), f, "num_blocks", blockSize, h, d);
      g.declareOutput(valueCacheOut(i), f, "num_blocks", blockSize, h, d);
    }
    return g.model(OPSET, "radixserve");
  }

  private String block(int layer, String x, String cu, String past, String tables,
      String bounds) {
    String p = "h." + layer + ".";
    int e = c.nEmbd();
    String a = layerNorm(x, p + "ln_1");
    String qkv = linear(a, p + "attn.c_attn");
    String[] split = g.ops("Split", "L" + layer + "_qkv", 3, List.of(qkv, g.ints(e, e, e)),
        attr("axis", 1L));                                                      // [T, E] each
    String attn = "L" + layer + "_attn";
    List<String> attnInputs = new ArrayList<>(List.of(split[0], split[1], split[2],
        keyCache(layer), valueCache(layer), cu, past, tables));
    while (attnInputs.size() < ATTENTION_METADATA_SLOT) {
      attnInputs.add(""); // cos/sin caches, slot_mapping, head_sink, q/k norms, k/v scales: absent
    }
    attnInputs.add(bounds);
    g.node("PagedAttention", "com.microsoft", "L" + layer + "/PagedAttention", attnInputs,
        List.of(attn, keyCacheOut(layer), valueCacheOut(layer)),
        attr("num_heads", (long) c.nHead()), attr("kv_num_heads", (long) c.nHead()),
        attr("scale", (float) (1.0 / Math.sqrt(c.headDim()))));
    x = g.op("Add", "L" + layer + "_res1", x, linear(attn, p + "attn.c_proj"));

    String m = layerNorm(x, p + "ln_2");
    String up = activation(linear(m, p + "mlp.c_fc"));
    return g.op("Add", "L" + layer + "_res2", x, linear(up, p + "mlp.c_proj"));
  }

  /** Conv1D: weight is [in, out], so x · W as is. */
  private String linear(String x, String prefix) {
    return g.op("Add", prefix, g.op("MatMul", prefix + "_mm", x, prefix + ".weight"), prefix + ".bias");
  }

  private String layerNorm(String x, String prefix) {
    return g.op("LayerNormalization", prefix, List.of(x, prefix + ".weight", prefix + ".bias"),
        attr("axis", -1L), attr("epsilon", (float) c.layerNormEpsilon()));
  }

  private String activation(String x) {
    String half = g.op("Mul", "half_x", x, g.scalar(0.5f, dt));
    String inner;
    switch (c.activationFunction()) {
      case "gelu_new", "gelu_pytorch_tanh" -> {
        // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        String cube = g.op("Mul", "x3", g.op("Mul", "x2", x, x), x);
        String poly = g.op("Add", "poly", x, g.op("Mul", "cx3", cube, g.scalar(0.044715f, dt)));
        inner = g.op("Tanh", "tanh",
            g.op("Mul", "scaled", poly, g.scalar((float) Math.sqrt(2.0 / Math.PI), dt)));
      }
      case "gelu" -> inner = g.op("Erf", "erf", g.op("Mul", "x_sqrt2", x, g.scalar((float) (1.0 / Math.sqrt(2.0)), dt)));
      default -> throw new IllegalArgumentException(
          "unsupported activation_function " + c.activationFunction() + " (gelu_new or gelu)");
    }
    return g.op("Mul", "gelu", half, g.op("Add", "one_plus", inner, g.scalar(1f, dt)));
  }

  private String gather(String data, String indices) {
    return g.op("Gather", "gather", List.of(data, indices), attr("axis", 0L));
  }
}
