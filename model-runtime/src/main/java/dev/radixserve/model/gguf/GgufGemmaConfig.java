package dev.radixserve.model.gguf;

import static dev.radixserve.model.gguf.GgufConfig.number;
import static dev.radixserve.model.gguf.GgufConfig.refuse;
import static dev.radixserve.model.gguf.GgufConfig.required;
import static dev.radixserve.model.gguf.GgufConfig.uint;
import static dev.radixserve.model.gguf.GgufKeys.key;

import dev.radixserve.model.GemmaConfig;
import dev.radixserve.model.GemmaConfig.LayerType;
import dev.radixserve.model.LlamaConfig;
import dev.radixserve.model.weights.ModelLoadException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A {@code gemma2} or {@code gemma3} GGUF file's hyper-parameters as llama.cpp's {@code
 * llama_model_gemma2/3::load_arch_hparams} read them, into the {@link GemmaConfig} radixserve's
 * Gemma graph computes. What the metadata leaves out, llama.cpp fixes, and so does this:
 *
 * <ul>
 *   <li>the score scale is {@code 1/sqrt(head_dim)}, or {@code 1/sqrt(hidden/heads)} for the 27B
 *       models (46 layers of Gemma 2, 62 of Gemma 3): transformers' {@code query_pre_attn_scalar}
 *       is not in the file;
 *   <li>Gemma 2: soft-caps 50 (scores) and 30 (logits) unless the file says; a window of 4096
 *       unless it says; every other layer full; sliding layers at {@code rope.freq_base_swa}, else
 *       the global rope;
 *   <li>Gemma 3: no score soft-cap, the logit soft-cap only when stated; a window only when
 *       stated, on five layers in six; sliding layers at {@code rope.freq_base_swa} (10,000
 *       without it) and unscaled, full ones at {@code rope.freq_base} with the file's scaling.
 * </ul>
 *
 * The pattern key ({@code attention.sliding_window_pattern}) overrides the default pattern, as in
 * llama.cpp's {@code load_swa_pattern}.
 */
final class GgufGemmaConfig {

  private GgufGemmaConfig() {}

  static GemmaConfig read(GgufFile f, String arch, Map<String, GgufFile.TensorInfo> names) {
    boolean gemma2 = arch.equals("gemma2");
    GgufConfig.Heads h = GgufConfig.Heads.read(f, arch);
    int layers = h.layers();
    int headDim = h.headDim();
    int ropeDim = f.get(key(GgufKeys.ROPE_DIMENSION_COUNT, arch)) == null ? headDim
        : uint(f, arch, GgufKeys.ROPE_DIMENSION_COUNT);
    if (h.valueDim() != headDim || ropeDim != headDim) {
      throw refuse(f, key(GgufKeys.VALUE_LENGTH, arch) + " " + h.valueDim() + " / "
          + key(GgufKeys.ROPE_DIMENSION_COUNT, arch) + " " + ropeDim + ": " + arch
          + " is served with value heads and rotary of the key heads' " + headDim);
    }
    int context = uint(f, arch, GgufKeys.CONTEXT_LENGTH);
    int vocab = GgufConfig.vocab(f, arch, names.get("embed_tokens.weight"));
    double eps = required(f, key(GgufKeys.RMS_EPS, arch));
    // llama.cpp's LLM_TYPE_27B: scores scaled by hidden / heads
    boolean is27b = layers == (gemma2 ? 46 : 62);
    double scalar = is27b ? (double) h.hidden() / h.heads() : headDim;
    double attnCap = gemma2 ? number(f, key(GgufKeys.ATTN_SOFTCAP, arch), 50) : 0;
    double finalCap = number(f, key(GgufKeys.FINAL_SOFTCAP, arch), gemma2 ? 30 : 0);
    int window = 0;
    List<Integer> windows = List.of();
    Object stated = f.get(key(GgufKeys.SLIDING_WINDOW, arch));
    // Gemma 3 without a window, or with 0, attends to the whole sequence on every layer
    if (gemma2 || stated != null && !(stated instanceof Long zero && zero == 0)) {
      window = stated == null ? 4096 : uint(f, arch, GgufKeys.SLIDING_WINDOW);
      windows = GgufConfig.slidingWindows(f, arch, layers, window, gemma2 ? 2L : 6L);
    }
    List<LayerType> types = new ArrayList<>();
    for (int i = 0; i < layers; i++) {
      types.add(!windows.isEmpty() && windows.get(i) > 0 ? LayerType.SLIDING_ATTENTION
          : LayerType.FULL_ATTENTION);
    }
    LlamaConfig.Rope full = GgufConfig.rope(f, arch, headDim, context, null);
    double swaBase = number(f, key(GgufKeys.ROPE_FREQ_BASE_SWA, arch),
        gemma2 ? full.theta() : 10000);
    // Gemma 2's sliding layers take the global scaling, Gemma 3's none
    LlamaConfig.Rope sliding = gemma2 && full.type().equals("linear")
        ? new LlamaConfig.Rope("linear", swaBase, full.factor(), 0, 0, 0)
        : LlamaConfig.Rope.plain(swaBase);
    if (gemma2 && !Set.of("default", "linear").contains(full.type())) {
      throw refuse(f, key(GgufKeys.ROPE_SCALING_TYPE, arch) + " " + full.type()
          + ": gemma2 is served with linear scaling or none");
    }
    boolean qkNorm = names.containsKey("layers.0.self_attn.q_norm.weight");
    try {
      return new GemmaConfig(GgufKeys.ARCHITECTURES.get(arch), layers, h.hidden(), h.heads(),
          h.kvHeads(), headDim, uint(f, arch, GgufKeys.FEED_FORWARD_LENGTH), context, vocab, eps, scalar,
          attnCap, finalCap, window, types,
          Map.of(LayerType.FULL_ATTENTION, full, LayerType.SLIDING_ATTENTION, sliding), false,
          qkNorm, !names.containsKey("lm_head.weight"));
    } catch (IllegalArgumentException e) {
      throw new ModelLoadException(f.primary(), e.getMessage(), e);
    }
  }
}
