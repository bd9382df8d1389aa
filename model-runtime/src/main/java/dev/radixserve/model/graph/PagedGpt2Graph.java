package dev.radixserve.model.graph;

import static dev.radixserve.model.graph.GraphBuilder.FLOAT;
import static dev.radixserve.model.graph.GraphBuilder.INT32;
import static dev.radixserve.model.graph.GraphBuilder.INT64;
import static dev.radixserve.model.graph.GraphBuilder.attr;
import static dev.radixserve.model.graph.GraphBuilder.attrs;

import dev.radixserve.model.ModelConfig;
import dev.radixserve.model.weights.GptWeights;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The portable paged GPT-2 graph (DESIGN.md's graph contract, fp32, standard ONNX ops, opset
 * {@value #OPSET}).
 *
 * <pre>
 *   inputs   input_ids int64 [T]   positions int64 [T]   block_tables int32 [S, M]
 *            cu_seqlens int32 [S+1]   past_lens int32 [S]   logits_index int64 [R]
 *            key_cache_{i}, value_cache_{i} float [NB, B, H, D]        (per layer)
 *            every GptWeights tensor under its canonical name, float     (weights)
 *   outputs  logits float [R, vocab]
 *            new_key_{i}, new_value_{i} float [T, H, D]   (the runtime writes them into the pool)
 * </pre>
 *
 * Attention over one key axis per step:
 * <pre>
 *   keys = [ past of seq 0: M*B slots | past of seq 1 | ... | past of seq S-1 | T new keys ]
 *   query t (sequence q, position p) may see   past slot j of seq s   iff s == q and j < past_lens[s]
 *                                               new key t'             iff seq(t') == q and pos(t') <= p
 * </pre>
 * The additive mask [T, S*M*B + T] is built once per step and shared by all layers; seq(t) is the
 * number of sequences s >= 1 with cu_seqlens[s] <= t. Logits are computed only at
 * {@code logits_index} rows (the last new token of each sequence, or every token of a sequence
 * that asks for prompt logprobs).
 */
public final class PagedGpt2Graph {

  public static final int OPSET = 17;
  public static final String INPUT_IDS = "input_ids";
  public static final String POSITIONS = "positions";
  public static final String BLOCK_TABLES = "block_tables";
  public static final String CU_SEQLENS = "cu_seqlens";
  public static final String PAST_LENS = "past_lens";
  public static final String LOGITS_INDEX = "logits_index";
  public static final String LOGITS = "logits";

  /** Large enough that exp() underflows to 0, finite so that a fully masked row cannot NaN. */
  private static final float MASKED = -1e9f;

  private final ModelConfig c;
  private final int blockSize;
  private final GraphBuilder g = new GraphBuilder("gpt2_paged");

  private PagedGpt2Graph(ModelConfig config, int blockSize) {
    this.c = config;
    this.blockSize = blockSize;
  }

  public static String keyCache(int layer) {
    return "key_cache_" + layer;
  }

  public static String valueCache(int layer) {
    return "value_cache_" + layer;
  }

  public static String newKey(int layer) {
    return "new_key_" + layer;
  }

  public static String newValue(int layer) {
    return "new_value_" + layer;
  }

  /** The six per-step inputs, in the order {@link #inputNames} lists them first. */
  public static List<String> stepInputNames() {
    return List.of(INPUT_IDS, POSITIONS, BLOCK_TABLES, CU_SEQLENS, PAST_LENS, LOGITS_INDEX);
  }

  /** Every input: step inputs, then key/value cache per layer, then the weights. */
  public static List<String> inputNames(ModelConfig config) {
    List<String> names = new ArrayList<>(stepInputNames());
    for (int i = 0; i < config.nLayer(); i++) {
      names.add(keyCache(i));
      names.add(valueCache(i));
    }
    names.addAll(GptWeights.expectedShapes(config).keySet());
    return names;
  }

  /** {@code logits}, then new key and new value per layer. */
  public static List<String> outputNames(ModelConfig config) {
    List<String> names = new ArrayList<>();
    names.add(LOGITS);
    for (int i = 0; i < config.nLayer(); i++) {
      names.add(newKey(i));
      names.add(newValue(i));
    }
    return names;
  }

  /** The serialized ModelProto for this config and block size. */
  public static byte[] build(ModelConfig config, int blockSize) {
    if (blockSize <= 0) {
      throw new IllegalArgumentException("block size must be positive, got " + blockSize);
    }
    return new PagedGpt2Graph(config, blockSize).assemble().toByteArray();
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
    for (int i = 0; i < c.nLayer(); i++) {
      g.input(keyCache(i), FLOAT, "num_blocks", blockSize, h, d);
      g.input(valueCache(i), FLOAT, "num_blocks", blockSize, h, d);
    }
    for (Map.Entry<String, long[]> w : GptWeights.expectedShapes(c).entrySet()) {
      Object[] dims = new Object[w.getValue().length];
      for (int k = 0; k < dims.length; k++) {
        dims[k] = w.getValue()[k];
      }
      g.input(w.getKey(), FLOAT, dims);
    }

    String x = g.op("Add", "embed",
        gather("wte.weight", ids, 0), gather("wpe.weight", pos, 0));
    String mask = mask(ids, pos, tables, cu, past);
    for (int i = 0; i < c.nLayer(); i++) {
      x = block(i, x, mask, tables);
    }
    String last = gather(x, logitsIndex, 0);
    String normed = layerNorm(last, "ln_f");
    String logits = g.op("Gemm", "lm_head", List.of(normed, GptWeights.lmHeadName(c)),
        attr("transB", 1L));
    g.output(logits, LOGITS, FLOAT, "R", c.vocabSize());
    return g.model(OPSET, "radixserve");
  }

  /** The additive attention mask [T, S*M*B + T], shared by every layer. */
  private String mask(String ids, String pos, String tables, String cu, String past) {
    String zero = g.scalarInt(0);
    String one = g.scalarInt(1);
    String t = g.op("Squeeze", "T", g.op("Shape", "shape_ids", ids), g.ints(0));
    String tokenIdx = g.op("Range", "token_idx", zero, t, one);
    String cuTail = g.op("Slice", "cu_tail", g.op("Cast", "cu64", List.of(cu), attr("to", (long) INT64)),
        g.ints(1), g.ints(Long.MAX_VALUE), g.ints(0));
    // before[t, s] = cu_seqlens[s + 1] <= t, so seq(t) = sum over s of before[t, s]
    String before = g.op("LessOrEqual", "before",
        unsqueeze(cuTail, 0), unsqueeze(tokenIdx, 1));
    String seqOf = g.op("ReduceSum", "seq_of",
        List.of(g.op("Cast", "before64", List.of(before), attr("to", (long) INT64)), g.ints(1)),
        attr("keepdims", 0L));
    String s = g.op("Squeeze", "S", g.op("Shape", "shape_past", past), g.ints(0));
    String seqIdx = g.op("Range", "seq_idx", zero, s, one);
    String ownSeq = g.op("Equal", "own_seq", unsqueeze(seqOf, 1), seqIdx);            // [T, S]
    String m = g.op("Gather", "M", List.of(g.op("Shape", "shape_tables", tables), one),
        attr("axis", 0L));
    String slots = g.op("Mul", "MB", m, g.scalarInt(blockSize));
    String slotIdx = g.op("Range", "slot_idx", zero, slots, one);                      // [MB]
    String past64 = g.op("Cast", "past64", List.of(past), attr("to", (long) INT64));
    String validPast = g.op("Less", "valid_past", unsqueeze(slotIdx, 0), unsqueeze(past64, 1)); // [S, MB]
    String seePast = g.op("And", "see_past", unsqueeze(ownSeq, 2), validPast);        // [T, S, MB]
    String seePastFlat = g.op("Reshape", "see_past_flat", seePast, g.ints(0, -1));     // [T, S*MB]
    String sameSeq = g.op("Equal", "same_seq", unsqueeze(seqOf, 1), unsqueeze(seqOf, 0));
    String causal = g.op("LessOrEqual", "causal", unsqueeze(pos, 0), unsqueeze(pos, 1)); // [q, k]
    String seeNew = g.op("And", "see_new", sameSeq, causal);                           // [T, T]
    String see = g.op("Concat", "see", List.of(seePastFlat, seeNew), attr("axis", 1L));
    return g.op("Where", "mask", see, g.scalar(0f), g.scalar(MASKED));
  }

  private String block(int layer, String x, String mask, String tables) {
    String p = "h." + layer + ".";
    int e = c.nEmbd();
    int h = c.nHead();
    int d = c.headDim();
    String headShape = g.ints(-1, h, d);
    String a = layerNorm(x, p + "ln_1");
    String qkv = linear(a, p + "attn.c_attn");
    String[] split = g.ops("Split", "L" + layer + "_qkv", 3, List.of(qkv, g.ints(e, e, e)),
        attr("axis", 1L));
    String q = g.op("Reshape", "L" + layer + "_q", split[0], headShape);             // [T, H, D]
    String k = g.op("Reshape", "L" + layer + "_k", split[1], headShape);
    String v = g.op("Reshape", "L" + layer + "_v", split[2], headShape);
    g.output(k, newKey(layer), FLOAT, "T", h, d);
    g.output(v, newValue(layer), FLOAT, "T", h, d);

    String keys = g.op("Concat", "L" + layer + "_keys",
        List.of(pastRows(keyCache(layer), tables, headShape), k), attr("axis", 0L));  // [K, H, D]
    String values = g.op("Concat", "L" + layer + "_values",
        List.of(pastRows(valueCache(layer), tables, headShape), v), attr("axis", 0L));
    String scaled = g.op("Mul", "L" + layer + "_qs", q, g.scalar((float) (1.0 / Math.sqrt(d))));
    String qh = transpose(scaled, 1, 0, 2);                                            // [H, T, D]
    String kh = transpose(keys, 1, 2, 0);                                              // [H, D, K]
    String scores = g.op("Add", "L" + layer + "_scores", g.op("MatMul", "L" + layer + "_qk", qh, kh), mask);
    String probs = g.op("Softmax", "L" + layer + "_probs", List.of(scores), attr("axis", -1L));
    String vh = transpose(values, 1, 0, 2);                                            // [H, K, D]
    String ctx = g.op("MatMul", "L" + layer + "_ctx", probs, vh);                      // [H, T, D]
    String merged = g.op("Reshape", "L" + layer + "_merged", transpose(ctx, 1, 0, 2), g.ints(-1, e));
    x = g.op("Add", "L" + layer + "_res1", x, linear(merged, p + "attn.c_proj"));

    String m = layerNorm(x, p + "ln_2");
    String up = activation(linear(m, p + "mlp.c_fc"));
    return g.op("Add", "L" + layer + "_res2", x, linear(up, p + "mlp.c_proj"));
  }

  /** A layer's cached rows of every sequence: [S*M*B, H, D], slot j of sequence s at s*M*B + j. */
  private String pastRows(String cache, String tables, String headShape) {
    return g.op("Reshape", cache + "_rows", gather(cache, tables, 0), headShape);
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
    String half = g.op("Mul", "half_x", x, g.scalar(0.5f));
    String inner;
    switch (c.activationFunction()) {
      case "gelu_new", "gelu_pytorch_tanh" -> {
        // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        String cube = g.op("Mul", "x3", g.op("Mul", "x2", x, x), x);
        String poly = g.op("Add", "poly", x, g.op("Mul", "cx3", cube, g.scalar(0.044715f)));
        inner = g.op("Tanh", "tanh",
            g.op("Mul", "scaled", poly, g.scalar((float) Math.sqrt(2.0 / Math.PI))));
      }
      case "gelu" -> inner = g.op("Erf", "erf", g.op("Mul", "x_sqrt2", x, g.scalar((float) (1.0 / Math.sqrt(2.0)))));
      default -> throw new IllegalArgumentException(
          "unsupported activation_function " + c.activationFunction() + " (gelu_new or gelu)");
    }
    return g.op("Mul", "gelu", half, g.op("Add", "one_plus", inner, g.scalar(1f)));
  }

  private String gather(String data, String indices, long axis) {
    return g.op("Gather", "gather", List.of(data, indices), attr("axis", axis));
  }

  private String unsqueeze(String x, long axis) {
    return g.op("Unsqueeze", "unsq", x, g.ints(axis));
  }

  private String transpose(String x, long... perm) {
    return g.op("Transpose", "tr", List.of(x), attrs("perm", perm));
  }
}
