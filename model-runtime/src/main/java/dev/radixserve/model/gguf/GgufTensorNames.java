package dev.radixserve.model.gguf;

import dev.radixserve.model.weights.ModelLoadException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * llama.cpp's tensor names (gguf-py's {@code TENSOR_NAMES}, {@code llama-arch.cpp}'s {@code
 * LLM_TENSOR_NAMES}) to radixserve's canonical Llama-family names ({@link
 * dev.radixserve.model.weights.LlamaWeights}), one table: the model-wide tensors, and the per-layer
 * ones under {@code blk.N.}. A tensor the table does not name (a fused {@code attn_qkv}, experts,
 * anything of another architecture) is refused by name.
 */
final class GgufTensorNames {

  /** Model-wide: llama.cpp's name → radixserve's (Llama family). */
  static final Map<String, String> GLOBAL = globals();

  /** Per layer {@code blk.N.NAME} → {@code layers.N.NAME'} (Llama family). */
  static final Map<String, String> LAYER = layers();

  /** GPT-2's model-wide tensors → {@link dev.radixserve.model.weights.GptWeights}' names. */
  static final Map<String, String> GPT2_GLOBAL = Map.of(
      "token_embd.weight", "wte.weight",
      "position_embd.weight", "wpe.weight",
      "output_norm.weight", "ln_f.weight",
      "output_norm.bias", "ln_f.bias",
      "output.weight", "lm_head.weight");

  /** GPT-2's per-layer tensors, {@code blk.N.NAME} → {@code h.N.NAME'}. */
  static final Map<String, String> GPT2_LAYER = gpt2Layers();

  /** The rope scaling factors Llama 3's converter writes (not a weight of the graph). */
  static final String ROPE_FREQS = "rope_freqs.weight";

  /** Phi-3's longrope divisors past and within the original context (not weights either). */
  static final String ROPE_FACTORS_LONG = "rope_factors_long.weight";
  static final String ROPE_FACTORS_SHORT = "rope_factors_short.weight";

  /**
   * Phi-3's per-layer tensors: the Llama family's, with its converter's fused ones under the
   * names of transformers' Phi3 ({@code attn_qkv} = {@code qkv_proj}; {@code ffn_up} holds
   * {@code gate_up_proj}, gate's rows then up's), split by {@link GgufFusedTensors}.
   */
  static final Map<String, String> PHI3_LAYER = phi3Layers();

  private static final Set<String> PHI3_KEPT =
      Set.of(ROPE_FREQS, ROPE_FACTORS_LONG, ROPE_FACTORS_SHORT);

  /** Canonical projections whose rows llama.cpp's converter permutes for Llama (LlamaModel.permute). */
  static final List<String> PERMUTED = List.of("self_attn.q_proj.weight", "self_attn.k_proj.weight");

  private static final Pattern BLOCK = Pattern.compile("blk\\.(\\d+)\\.(.+)");

  private GgufTensorNames() {}

  private static Map<String, String> globals() {
    Map<String, String> m = new LinkedHashMap<>();
    m.put("token_embd.weight", "embed_tokens.weight");
    m.put("output_norm.weight", "norm.weight");
    m.put("output.weight", "lm_head.weight");
    return m;
  }

  private static Map<String, String> gpt2Layers() {
    Map<String, String> m = new LinkedHashMap<>();
    for (String[] p : new String[][] {{"attn_norm", "ln_1"}, {"attn_qkv", "attn.c_attn"},
        {"attn_output", "attn.c_proj"}, {"ffn_norm", "ln_2"}, {"ffn_up", "mlp.c_fc"},
        {"ffn_down", "mlp.c_proj"}}) {
      m.put(p[0] + ".weight", p[1] + ".weight");
      m.put(p[0] + ".bias", p[1] + ".bias");
    }
    return m;
  }

  /**
   * Gemma 2/3's per-layer tensors ({@link dev.radixserve.model.weights.GemmaWeights}' names): two
   * norms more than Llama's (after attention, after the MLP), llama.cpp's {@code ffn_norm} being
   * Gemma's pre-feed-forward one; q/k norms (Gemma 3); no biases.
   */
  static final Map<String, String> GEMMA_LAYER = gemmaLayers();

  private static Map<String, String> gemmaLayers() {
    Map<String, String> m = new LinkedHashMap<>(layers());
    m.keySet().removeIf(name -> name.endsWith(".bias"));
    m.put("post_attention_norm.weight", "post_attention_layernorm.weight");
    m.put("ffn_norm.weight", "pre_feedforward_layernorm.weight"); // Llama's: post_attention
    m.put("post_ffw_norm.weight", "post_feedforward_layernorm.weight");
    return m;
  }

  private static Map<String, String> phi3Layers() {
    Map<String, String> m = new LinkedHashMap<>(layers());
    // tensors llama.cpp's phi3 loader does not take
    m.keySet().removeAll(Set.of("ffn_up.bias", "ffn_gate.weight", "ffn_gate.bias",
        "attn_q_norm.weight", "attn_k_norm.weight"));
    m.put("attn_qkv.weight", GgufFusedTensors.QKV);
    m.put("ffn_up.weight", GgufFusedTensors.GATE_UP);
    return m;
  }

  private static Map<String, String> layers() {
    Map<String, String> m = new LinkedHashMap<>();
    m.put("attn_norm.weight", "input_layernorm.weight");
    for (String[] p : new String[][] {{"attn_q", "self_attn.q_proj"}, {"attn_k", "self_attn.k_proj"},
        {"attn_v", "self_attn.v_proj"}, {"attn_output", "self_attn.o_proj"},
        {"ffn_gate", "mlp.gate_proj"}, {"ffn_up", "mlp.up_proj"}, {"ffn_down", "mlp.down_proj"}}) {
      m.put(p[0] + ".weight", p[1] + ".weight");
      m.put(p[0] + ".bias", p[1] + ".bias");
    }
    m.put("attn_q_norm.weight", "self_attn.q_norm.weight");
    m.put("attn_k_norm.weight", "self_attn.k_norm.weight");
    m.put("ffn_norm.weight", "post_attention_layernorm.weight");
    return m;
  }

  /**
   * The file's tensors under radixserve's names ({@link #ROPE_FREQS} kept under its own).
   *
   * @throws ModelLoadException naming a tensor the table does not know
   */
  static Map<String, GgufFile.TensorInfo> canonical(GgufFile f, String arch) {
    Map<String, GgufFile.TensorInfo> out = new LinkedHashMap<>();
    for (GgufFile.TensorInfo t : f.tensors()) {
      String name = switch (arch) {
        case "gpt2" -> gpt2(t.name());
        case "phi3" -> canonical(t.name(), PHI3_LAYER, PHI3_KEPT);
        // llama.cpp's gemma2 always ties the head to token_embd: it takes no output.weight
        case "gemma2" -> t.name().equals("output.weight") ? null
            : canonical(t.name(), GEMMA_LAYER, Set.of());
        case "gemma3" -> canonical(t.name(), GEMMA_LAYER, Set.of());
        default -> canonical(t.name(), LAYER, Set.of(ROPE_FREQS));
      };
      if (name == null) {
        throw new ModelLoadException(t.file(), "tensor " + t.name() + " is not one of the "
            + f.get(GgufKeys.ARCHITECTURE) + " tensors radixserve serves");
      }
      out.put(name, t);
    }
    return out;
  }

  /** GptWeights' name of llama.cpp's GPT-2 tensor {@code name}, or null. */
  static String gpt2(String name) {
    String global = GPT2_GLOBAL.get(name);
    if (global != null) {
      return global;
    }
    Matcher m = BLOCK.matcher(name);
    if (m.matches()) {
      String part = GPT2_LAYER.get(m.group(2));
      return part == null ? null : "h." + m.group(1) + "." + part;
    }
    return null;
  }

  /** radixserve's name of llama.cpp's (Llama-family) tensor {@code name}, or null. */
  static String canonical(String name) {
    return canonical(name, LAYER, Set.of(ROPE_FREQS));
  }

  /** @param kept tensors that are not weights of the graph, kept under their own names */
  private static String canonical(String name, Map<String, String> layer, Set<String> kept) {
    if (kept.contains(name)) {
      return name;
    }
    String global = GLOBAL.get(name);
    if (global != null) {
      return global;
    }
    Matcher m = BLOCK.matcher(name);
    if (m.matches()) {
      String part = layer.get(m.group(2));
      return part == null ? null : "layers." + m.group(1) + "." + part;
    }
    return null;
  }
}
