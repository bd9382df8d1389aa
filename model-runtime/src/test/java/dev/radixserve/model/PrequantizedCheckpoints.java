package dev.radixserve.model;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.radixserve.model.quant.CheckpointQuantization;
import dev.radixserve.model.quant.CheckpointRepacker;
import dev.radixserve.model.weights.DType;
import dev.radixserve.model.quant.WeightLayout;
import dev.radixserve.model.weights.GptWeights;
import dev.radixserve.model.weights.HfModelWriter;
import dev.radixserve.model.weights.LlamaWeights;
import dev.radixserve.model.weights.Tensor;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Path;
import dev.radixserve.model.graph.OnnxGraph;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * GPTQ and AWQ checkpoints of a float Llama-family or GPT-2 model, as those projects store them, for the
 * tests of their loading: each projection rounded to nearest per group (asymmetric, or GPTQ's
 * symmetric zero point 2^(bits−1)), packed into int32 {@code qweight}/{@code qzeros} with fp16
 * scales; and beside them the float model those blocks decode to, the reference a served
 * checkpoint must match. The packing here is checked against the upstream projects' own
 * ({@code CheckpointRepackerTest}, on the fixtures of {@code resources/prequantized}), so a test
 * through these files checks the loader against the formats, not against itself.
 *
 * <p>Every float is rounded to fp16 first, so a checkpoint written in F16 (as real ones are) and
 * the F32 reference hold the same numbers.
 */
public final class PrequantizedCheckpoints {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final ValueLayout.OfInt I32_LE =
      ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
  private static final ValueLayout.OfFloat F32_LE =
      ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
  /** AutoAWQ's AWQ_ORDER: nibble i of a word holds column AWQ_ORDER[i] of its eight. */
  private static final int[] AWQ_ORDER = {0, 2, 4, 6, 1, 3, 5, 7};

  private PrequantizedCheckpoints() {}

  /**
   * @param stored the checkpoint's tensors (packed projections), as the loader sees them
   * @param dequantized the float model the checkpoint decodes to
   */
  public record Packed<W extends ModelWeights>(W stored, W dequantized) {}

  /** {@code model} quantized in {@code q}'s format (symmetric blocks when {@code symmetric}). */
  public static Packed<LlamaWeights> pack(LlamaWeights model, CheckpointQuantization q,
      boolean symmetric) {
    return pack(model, q, symmetric, module -> true);
  }

  /** As above, act-order (under {@code q.actOrder()}) only in the modules {@code actOrder} names. */
  public static Packed<LlamaWeights> pack(LlamaWeights model, CheckpointQuantization q,
      boolean symmetric, Predicate<String> actOrder) {
    Parts p = parts(model.tensors(), q, symmetric, actOrder,
        name -> name.startsWith("layers.") && name.endsWith("_proj.weight"), WeightLayout.OUT_IN);
    LlamaConfig c = model.config();
    return new Packed<>(new LlamaWeights(c, q, p.stored(), null),
        new LlamaWeights(c, p.dense(), null));
  }

  /**
   * A GPT-2 model as AutoGPTQ saves one: each Conv1D quantized as the linear layer it computes
   * (AutoGPTQ transposes the {@code [in, out]} weight first), so packed as a Llama projection.
   */
  public static Packed<GptWeights> pack(GptWeights model, CheckpointQuantization q,
      boolean symmetric) {
    Parts p = parts(model.tensors(), q, symmetric, module -> true,
        name -> name.matches("h\\.\\d+\\.(attn|mlp)\\.c_(attn|proj|fc)\\.weight"),
        WeightLayout.IN_OUT);
    ModelConfig c = model.config();
    return new Packed<>(new GptWeights(c, q, p.stored(), null), new GptWeights(c, p.dense(), null));
  }

  private record Parts(Map<String, Tensor> stored, Map<String, Tensor> dense) {}

  /**
   * The projections {@code projection} picks rounded per group and packed, the rest as it is
   * (every float rounded to fp16 first); beside them the floats the packed blocks decode to.
   */
  private static Parts parts(Map<String, Tensor> tensors, CheckpointQuantization q,
      boolean symmetric, Predicate<String> actOrder, Predicate<String> projection,
      WeightLayout layout) {
    Map<String, Tensor> stored = new LinkedHashMap<>();
    Map<String, Tensor> dense = new LinkedHashMap<>();
    tensors.forEach((name, t) -> {
      float[] values = t.toFloatArray();
      for (int i = 0; i < values.length; i++) {
        values[i] = Float.float16ToFloat(Float.floatToFloat16(values[i]));
      }
      if (projection.test(name)) {
        String module = CheckpointRepacker.moduleOf(name);
        long[] kn = layout.kn(t.shape());
        int k = (int) kn[0];
        int n = (int) kn[1];
        boolean rows = layout == WeightLayout.OUT_IN;
        Blocks b = Blocks.of(rows ? values : transpose(values, k, n), n, k, q, symmetric,
            groupIndex(module, k, actOrder.test(module) ? q : q.withActOrder(false)));
        stored.putAll(b.tensors(module, q));
        float[] decoded = b.dequantized();
        dense.put(name, floats(name, t.shape(), rows ? decoded : transpose(decoded, n, k)));
      } else {
        stored.put(name, floats(name, t.shape(), values));
        dense.put(name, floats(name, t.shape(), values));
      }
    });
    return new Parts(stored, dense);
  }

  /** {@code a} [rows, cols] row-major, transposed. */
  static float[] transpose(float[] a, int rows, int cols) {
    float[] t = new float[a.length];
    for (int r = 0; r < rows; r++) {
      for (int c = 0; c < cols; c++) {
        t[c * rows + r] = a[r * cols + c];
      }
    }
    return t;
  }

  /**
   * Each input's group: {@code k / G}, or under act-order as GPTQ's act-order assigns them,
   * {@code g_idx[perm[i]] = i / G} for a permutation of the inputs (here a seeded shuffle standing
   * in for the Hessian's order: one per input, so q/k/v share theirs and gate/up theirs, as
   * GPTQ's are when computed from the same inputs).
   */
  static int[] groupIndex(String module, int k, CheckpointQuantization q) {
    int[] perm = new int[k];
    java.util.Arrays.setAll(perm, i -> i);
    if (q.actOrder()) {
      String input = module.replaceAll("\\.self_attn\\.[qkv]_proj$", ".self_attn.qkv")
          .replaceAll("\\.mlp\\.(gate|up)_proj$", ".mlp.gate_up");
      java.util.SplittableRandom random = new java.util.SplittableRandom(input.hashCode());
      for (int i = k - 1; i > 0; i--) {
        int j = random.nextInt(i + 1);
        int t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
      }
    }
    int[] gIdx = new int[k];
    for (int i = 0; i < k; i++) {
      gIdx[perm[i]] = i / q.groupSize();
    }
    return gIdx;
  }

  /**
   * A model directory as the GPTQ/AWQ tools save one: the family's config.json with the
   * format's {@code quantization_config}, floats in {@code dtype}, packed tensors in I32.
   */
  public static void write(Packed<?> p, Path dir, DType dtype, boolean symmetric) {
    writeWeights(p.stored(), dir, dtype);
    Path config = dir.resolve("config.json");
    try {
      ObjectNode n = (ObjectNode) JSON.readTree(config.toFile());
      n.set("quantization_config",
          quantizationConfig(p.stored().checkpointQuantization(), symmetric));
      JSON.writerWithDefaultPrettyPrinter().writeValue(config.toFile(), n);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * A Llama-family or GPT-2 model directory as Hugging Face saves it (names under the family's
   * prefix): the stored half of a {@link Packed}, or its decoded float model.
   */
  public static void writeWeights(ModelWeights weights, Path dir, DType dtype) {
    switch (weights) {
      case LlamaWeights w -> HfModelWriter.write(w, dir, dtype, 1);
      case GptWeights w -> HfModelWriter.write(w, dir, dtype, "transformer.");
      default -> throw new IllegalArgumentException("no writer for " + weights);
    }
  }

  /**
   * The input orders {@code graph} gathers activations by (GPTQ act-order), one per Gather of
   * activations; {@code biases} instead: the orders it permutes biases by.
   */
  public static List<String> actOrderGathers(OnnxGraph graph, boolean biases) {
    try {
      return ai.onnx.proto.OnnxMl.ModelProto.parseFrom(graph.model()).getGraph().getNodeList()
          .stream().filter(n -> n.getOpType().equals("Gather")
              && n.getName().startsWith(biases ? "act_order_bias_" : "act_order_")
              && (biases || !n.getName().startsWith("act_order_bias_")))
          .map(n -> n.getInput(1)).toList();
    } catch (com.google.protobuf.InvalidProtocolBufferException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The {@code quantization_config} AutoGPTQ/GPTQModel or AutoAWQ writes for {@code q}. */
  public static ObjectNode quantizationConfig(CheckpointQuantization q, boolean symmetric) {
    ObjectNode n = JSON.createObjectNode();
    n.put("quant_method", q.method().label()).put("bits", q.bits())
        .put("group_size", q.groupSize());
    if (q.method() == CheckpointQuantization.Method.GPTQ) {
      n.put("desc_act", q.actOrder()).put("sym", symmetric).put("damp_percent", 0.01)
          .put("true_sequential", true)
          .put("checkpoint_format", q.zeroOffset() == 1 ? "gptq" : "gptq_v2");
    } else {
      n.put("version", "gemm").put("zero_point", true).putNull("modules_to_not_convert");
    }
    return n;
  }

  /**
   * One projection rounded per group: {@code codes[n][k]}, {@code zeros[g][n]} (the true zero
   * points), {@code scales[g][n]} (fp16 values), {@code gIdx[k]} (input k's group).
   */
  record Blocks(int n, int k, int bits, int group, int[][] codes, int[][] zeros,
      float[][] scales, int[] gIdx) {

    static Blocks of(float[] w, int n, int k, CheckpointQuantization q, boolean symmetric,
        int[] gIdx) {
      int group = q.groupSize();
      int maxq = (1 << q.bits()) - 1;
      int groups = k / group;
      int[][] codes = new int[n][k];
      int[][] zeros = new int[groups][n];
      float[][] scales = new float[groups][n];
      for (int row = 0; row < n; row++) {
        for (int g = 0; g < groups; g++) {
          float min = 0;
          float max = 0;
          for (int j = 0; j < k; j++) {
            if (gIdx[j] == g) {
              min = Math.min(min, w[row * k + j]);
              max = Math.max(max, w[row * k + j]);
            }
          }
          float scale;
          int zero;
          if (symmetric) {
            float amax = Math.max(-min, max);
            scale = fp16(2 * amax / maxq);
            zero = (maxq + 1) / 2;
          } else {
            scale = fp16((max - min) / maxq);
            zero = Math.clamp(Math.round(-min / scale), 0, maxq);
          }
          scales[g][row] = scale;
          zeros[g][row] = zero;
          for (int j = 0; j < k; j++) {
            if (gIdx[j] == g) {
              codes[row][j] = Math.clamp(Math.round(w[row * k + j] / scale) + zero, 0, maxq);
            }
          }
        }
      }
      return new Blocks(n, k, q.bits(), group, codes, zeros, scales, gIdx);
    }

    /** (code − zero) · scale in fp32, [n, k]. */
    float[] dequantized() {
      float[] out = new float[n * k];
      for (int row = 0; row < n; row++) {
        for (int j = 0; j < k; j++) {
          out[row * k + j] = (codes[row][j] - zeros[gIdx[j]][row]) * scales[gIdx[j]][row];
        }
      }
      return out;
    }

    Map<String, Tensor> tensors(String module, CheckpointQuantization q) {
      Map<String, Tensor> m = new LinkedHashMap<>();
      int f = 32 / bits;
      int groups = k / group;
      if (q.method() == CheckpointQuantization.Method.GPTQ) {
        m.put(module + ".qweight", ints(module + ".qweight", new long[] {k / f, n},
            packGptqWeight(codes, bits)));
        m.put(module + ".qzeros", ints(module + ".qzeros", new long[] {groups, n / f},
            packGptqZeros(zeros, bits, q.zeroOffset())));
        m.put(module + ".g_idx", ints(module + ".g_idx", new long[] {k}, gIdx));
      } else {
        m.put(module + ".qweight", ints(module + ".qweight", new long[] {k, n / 8},
            packAwq(transpose(codes))));
        m.put(module + ".qzeros", ints(module + ".qzeros", new long[] {groups, n / 8},
            packAwq(zeros)));
      }
      float[] flat = new float[groups * n];
      for (int g = 0; g < groups; g++) {
        System.arraycopy(scales[g], 0, flat, g * n, n);
      }
      m.put(module + ".scales", floats(module + ".scales", new long[] {groups, n}, flat));
      return m;
    }
  }

  /** GPTQ's qweight [K/f, N] of {@code codes[n][k]}: input k at bits·(k mod f) of word k/f. */
  public static int[] packGptqWeight(int[][] codes, int bits) {
    int n = codes.length;
    int k = codes[0].length;
    int f = 32 / bits;
    int[] out = new int[k / f * n];
    for (int row = 0; row < n; row++) {
      for (int j = 0; j < k; j++) {
        out[(j / f) * n + row] |= codes[row][j] << (bits * (j % f));
      }
    }
    return out;
  }

  /**
   * GPTQ's qzeros [G, N/f] of {@code zeros[g][n]}: output n at bits·(n mod f) of word n/f,
   * stored as zero − {@code offset} (v1: 1) masked to the width.
   */
  public static int[] packGptqZeros(int[][] zeros, int bits, int offset) {
    int groups = zeros.length;
    int n = zeros[0].length;
    int f = 32 / bits;
    int mask = (1 << bits) - 1;
    int[] out = new int[groups * (n / f)];
    for (int g = 0; g < groups; g++) {
      for (int c = 0; c < n; c++) {
        out[g * (n / f) + c / f] |= ((zeros[g][c] - offset) & mask) << (bits * (c % f));
      }
    }
    return out;
  }

  /** AWQ's packing of {@code values[r][c]} (4-bit) into [R, C/8]: AWQ_ORDER within each word. */
  public static int[] packAwq(int[][] values) {
    int rows = values.length;
    int cols = values[0].length;
    int[] out = new int[rows * (cols / 8)];
    for (int r = 0; r < rows; r++) {
      for (int w = 0; w < cols / 8; w++) {
        int word = 0;
        for (int i = 0; i < 8; i++) {
          word |= values[r][w * 8 + AWQ_ORDER[i]] << (4 * i);
        }
        out[r * (cols / 8) + w] = word;
      }
    }
    return out;
  }

  static int[][] transpose(int[][] a) {
    int[][] t = new int[a[0].length][a.length];
    for (int i = 0; i < a.length; i++) {
      for (int j = 0; j < a[0].length; j++) {
        t[j][i] = a[i][j];
      }
    }
    return t;
  }

  private static float fp16(float v) {
    return Float.float16ToFloat(Float.floatToFloat16(v));
  }

  public static Tensor ints(String name, long[] shape, int[] values) {
    MemorySegment seg = MemorySegment.ofArray(new int[values.length]);
    for (int i = 0; i < values.length; i++) {
      seg.setAtIndex(I32_LE, i, values[i]);
    }
    return new Tensor(name, DType.I32, shape, seg);
  }

  static Tensor floats(String name, long[] shape, float[] values) {
    MemorySegment seg = MemorySegment.ofArray(new float[values.length]);
    for (int i = 0; i < values.length; i++) {
      seg.setAtIndex(F32_LE, i, values[i]);
    }
    return new Tensor(name, DType.F32, shape, seg);
  }
}
