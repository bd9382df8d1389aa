package dev.radixserve.model.gguf;

import dev.radixserve.model.weights.ModelLoadException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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
      String name = arch.equals("gpt2") ? gpt2(t.name()) : canonical(t.name());
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
    if (name.equals(ROPE_FREQS)) {
      return ROPE_FREQS;
    }
    String global = GLOBAL.get(name);
    if (global != null) {
      return global;
    }
    Matcher m = BLOCK.matcher(name);
    if (m.matches()) {
      String part = LAYER.get(m.group(2));
      return part == null ? null : "layers." + m.group(1) + "." + part;
    }
    return null;
  }
}
