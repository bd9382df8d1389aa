package dev.radixserve.model.quant;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A checkpoint that comes quantized: its {@code config.json}'s {@code quantization_config}, for
 * the two formats whose blocks are MatMulNBits' own (one scale and one zero point per group of
 * {@code groupSize} inputs of an output), so they are repacked bit for bit, never dequantized and
 * quantized again ({@link CheckpointRepacker}):
 *
 * <ul>
 *   <li><b>GPTQ</b> (AutoGPTQ, GPTQModel, Optimum; {@code checkpoint_format} gptq or gptq_v2),
 *       4 or 8 bits, with or without act-order ({@code desc_act}: a layer's groups are sets of
 *       inputs in the order of GPTQ's Hessian, {@code g_idx}; served by gathering each
 *       product's inputs into group order first, see {@link CheckpointRepacker#inputOrder}).
 *   <li><b>AWQ</b> (AutoAWQ's GEMM packing), 4 bits with zero points.
 * </ul>
 *
 * Anything else that a {@code quantization_config} may say (bitsandbytes, fp8, compressed
 * tensors, AWQ's GEMV or Marlin packing, 2/3-bit GPTQ, per-channel groups) is refused with the
 * reason, never loaded as if it were plain weights.
 *
 * @param method GPTQ or AWQ
 * @param bits 4 (or 8 under GPTQ)
 * @param groupSize inputs per scale: MatMulNBits' block_size
 * @param zeroOffset what a GPTQ v1 checkpoint's stored zero points lack (1: AutoGPTQ stores
 *     zero − 1 and adds it back when it unpacks); 0 for gptq_v2 and AWQ
 * @param actOrder some layer's {@code g_idx} (GPTQ's act-order, {@code desc_act}) puts inputs in
 *     groups out of their order, so each quantized product gathers its inputs into group order
 *     first; found by the loader in the data ({@link CheckpointRepacker#inputOrder})
 */
public record CheckpointQuantization(Method method, int bits, int groupSize, int zeroOffset,
    boolean actOrder) {

  /**
   * The two supported formats, by {@code quant_method}; a GGUF file's Q8_0/Q4_0 blocks, kept in
   * the file's mapping and written into MatMulNBits' layout from there ({@link
   * GgmlBlockRepacker}); and a GGUF Q4_K projection's codes, served symmetric with a float
   * offset per block ({@link Q4KRepacker}; per weight, {@link QuantSpec#offsetWeights}).
   */
  public enum Method {
    GPTQ("gptq"),
    AWQ("awq"),
    GGUF("gguf"),
    GGUF_Q4K("gguf-q4k");

    private final String label;

    Method(String label) {
      this.label = label;
    }

    public String label() {
      return label;
    }
  }

  public CheckpointQuantization {
    if (bits != 4 && !(bits == 8 && method != Method.AWQ)) {
      throw new IllegalArgumentException(method.label + " with " + bits + " bits");
    }
    if (!QuantSpec.validBlockSize(groupSize)) {
      throw new IllegalArgumentException("group size " + groupSize);
    }
    if (actOrder && method != Method.GPTQ) {
      throw new IllegalArgumentException("act-order is GPTQ's");
    }
  }

  /** Without act-order. */
  public CheckpointQuantization(Method method, int bits, int groupSize, int zeroOffset) {
    this(method, bits, groupSize, zeroOffset, false);
  }

  /**
   * The checkpoint's quantization from {@code quantization_config}.
   *
   * @throws IllegalArgumentException naming the key and value a checkpoint cannot be served with
   */
  public static CheckpointQuantization parse(JsonNode q) {
    String method = q.path("quant_method").asText("");
    return switch (method) {
      case "gptq" -> gptq(q);
      case "awq" -> awq(q);
      default -> throw new IllegalArgumentException("quantization_config quant_method "
          + (method.isEmpty() ? "(none)" : method) + " is not supported: radixserve loads GPTQ"
          + " and AWQ (GEMM) checkpoints, and F32/F16/BF16 ones (which --quantization int8 or"
          + " int4 quantizes at load)");
    };
  }

  private static CheckpointQuantization gptq(JsonNode q) {
    int bits = q.path("bits").asInt(0);
    if (bits != 4 && bits != 8) {
      throw refused("gptq bits " + q.path("bits") + " is not supported (4 or 8: MatMulNBits'"
          + " widths)");
    }
    String format = q.path("checkpoint_format").asText("gptq");
    int offset = switch (format) {
      case "gptq" -> 1;
      case "gptq_v2" -> 0;
      default -> throw refused("gptq checkpoint_format " + format + " is not supported (gptq"
          + " or gptq_v2; " + format + " packs the weights for another kernel)");
    };
    if (q.path("lm_head").asBoolean(false)) {
      throw refused("gptq lm_head true (a quantized LM head) is not supported: the head is"
          + " loaded from a float lm_head.weight");
    }
    JsonNode dynamic = q.get("dynamic");
    if (dynamic != null && !dynamic.isNull() && !dynamic.isEmpty()) {
      throw refused("gptq dynamic (per-module bits and group sizes) is not supported");
    }
    // act-order is read from the layers' g_idx at load (withActOrder), not from desc_act:
    // static_groups keeps a plain g_idx under desc_act, and the data is what the blocks mean
    return new CheckpointQuantization(Method.GPTQ, bits, groupSize(q, "group_size"), offset);
  }

  private static CheckpointQuantization awq(JsonNode q) {
    int bits = q.has("bits") ? q.path("bits").asInt(0) : q.path("w_bit").asInt(0);
    if (bits != 4) {
      throw refused("awq bits " + bits + " is not supported (4)");
    }
    String version = q.path("version").asText("gemm").toLowerCase(java.util.Locale.ROOT);
    if (!version.equals("gemm")) {
      throw refused("awq version " + version + " is not supported (gemm: AutoAWQ's GEMM"
          + " packing; " + version + " orders the nibbles for another kernel)");
    }
    if (!q.path("zero_point").asBoolean(true)) {
      throw refused("awq zero_point false is not supported (AWQ's GEMM checkpoints carry zero"
          + " points)");
    }
    String key = q.has("group_size") ? "group_size" : "q_group_size";
    return new CheckpointQuantization(Method.AWQ, 4, groupSize(q, key), 0);
  }

  private static int groupSize(JsonNode q, String key) {
    int size = q.path(key).asInt(0);
    if (size == -1) {
      throw refused(q.path("quant_method").asText() + " " + key + " -1 (one scale per output"
          + " row) is not supported: MatMulNBits needs groups of 16 to 256 inputs");
    }
    if (!QuantSpec.validBlockSize(size)) {
      throw refused(q.path("quant_method").asText() + " " + key + " " + q.path(key)
          + " is not supported (16, 32, 64, 128 or 256: MatMulNBits' block sizes)");
    }
    return size;
  }

  private static IllegalArgumentException refused(String message) {
    return new IllegalArgumentException("quantization_config " + message);
  }

  /** This quantization with act-order on or off. */
  public CheckpointQuantization withActOrder(boolean on) {
    return new CheckpointQuantization(method, bits, groupSize, zeroOffset, on);
  }

  public QuantMode mode() {
    return bits == 4 ? QuantMode.INT4 : QuantMode.INT8;
  }

  /** Codes per int32 of {@code qweight} and {@code qzeros}. */
  public int packFactor() {
    return 32 / bits;
  }

  /** The GGUF Q4_K blocks a projection is served on: 4-bit codes in blocks of 32, offsets. */
  public static final CheckpointQuantization GGUF_Q4K =
      new CheckpointQuantization(Method.GGUF_Q4K, 4, Q4KRepacker.BLOCK, 0);

  /**
   * A GGUF file's Q8_0 blocks: 8-bit codes in blocks of 32, an fp16 scale each ({@link
   * GgmlBlockRepacker}), a projection's or a table's ({@link QuantSpec#q8Tables}).
   */
  public static final CheckpointQuantization GGUF_Q8_0 =
      new CheckpointQuantization(Method.GGUF, 8, GgmlBlockRepacker.BLOCK, 0);

  /**
   * Whether the blocks carry a float offset each ({@link OffsetWeight}) instead of zero points:
   * symmetric codes, the offset added back by the graph.
   */
  public boolean offsets() {
    return method == Method.GGUF_Q4K;
  }

  /** e.g. {@code gptq 4-bit, group 128} ({@code , act-order}); {@code gguf Q4_0 blocks}. */
  public String describe() {
    if (offsets()) {
      return "gguf Q4_K blocks (4-bit codes, group " + groupSize + ", a float offset per block)";
    }
    if (method == Method.GGUF) {
      return "gguf Q" + bits + "_0 blocks (" + bits + "-bit, group " + groupSize + ")";
    }
    return method.label + " " + bits + "-bit, group " + groupSize + (actOrder ? ", act-order" : "");
  }

  /**
   * {@link #describe} and how the layers are served: {@code gptq 4-bit, group 128 (the
   * checkpoint's own blocks)}, a MatMulNBits block per group. (From 2026-11-29 until the graph
   * gave large blocks an even row count, {@code QuantSpec.evenRows}, a group of 128 was served
   * as four blocks of 32.)
   */
  public String describeServed() {
    return describe() + " (the checkpoint's own blocks)";
  }

  /**
   * The tensors a linear layer of {@code k} inputs and {@code n} outputs is stored as, under its
   * module prefix ({@code layers.0.self_attn.q_proj}), with their shapes: the checkpoint's, in
   * place of the float {@code .weight}.
   *
   * @param layout how the family stores the float weight: GPTQ and AWQ pack theirs one way for
   *     every family; a GGUF file's blocks stand under the float weight's name and shape
   * @throws IllegalArgumentException when the layer's K or N cannot be stored in this format
   */
  public Map<String, long[]> tensorShapes(String prefix, long k, long n, WeightLayout layout) {
    int pack = packFactor();
    if (k % groupSize != 0) {
      throw new IllegalArgumentException(prefix + " has " + k + " inputs, not a multiple of the"
          + " checkpoint's group size " + groupSize);
    }
    long groups = k / groupSize;
    Map<String, long[]> m = new LinkedHashMap<>();
    switch (method) {
      case GPTQ -> {
        requireMultiple(prefix, "outputs", n, pack);
        m.put(prefix + ".qweight", new long[] {k / pack, n});
        m.put(prefix + ".qzeros", new long[] {groups, n / pack});
        m.put(prefix + ".scales", new long[] {groups, n});
        m.put(prefix + ".g_idx", new long[] {k});
      }
      case AWQ -> {
        requireMultiple(prefix, "outputs", n, pack);
        m.put(prefix + ".qweight", new long[] {k, n / pack});
        m.put(prefix + ".qzeros", new long[] {groups, n / pack});
        m.put(prefix + ".scales", new long[] {groups, n});
      }
      // the file's blocks, read as floats in the family's layout (GPT-2's Conv1D: [K, N]) and
      // repacked from the file's rows of K ({@link GgmlBlockRepacker.BlockRows})
      case GGUF, GGUF_Q4K -> m.put(prefix + ".weight", layout.shape(k, n));
    }
    return m;
  }

  private static void requireMultiple(String prefix, String what, long size, int pack) {
    if (size % pack != 0) {
      throw new IllegalArgumentException(prefix + " has " + size + " " + what + ", not a"
          + " multiple of the " + pack + " codes an int32 packs");
    }
  }
}
