package dev.radixserve.model.weights;

import com.fasterxml.jackson.databind.JsonNode;
import dev.radixserve.model.LlamaConfig;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reads a Llama-family {@code config.json} into a {@link LlamaConfig} as transformers 5 reads it
 * (and the transformers 4 form it still reads), with transformers' defaults per {@code
 * model_type}: Llama, Qwen2, Qwen3, Mistral, and Phi-3 (its fused projections split at load by
 * {@link FusedProjections}). Every key of the family's transformers config class is in {@link
 * #KEYS}: read here,
 * or inert with the reason. A value the graph does not compute (another activation, an unknown
 * rope type, a rotary over part of the head) is refused by name and value.
 */
final class LlamaConfigReader {

  /** model_type → the architecture class Hugging Face builds for it. */
  static final Map<String, String> ARCHITECTURES = Map.of(
      "llama", "LlamaForCausalLM",
      "qwen2", "Qwen2ForCausalLM",
      "qwen3", "Qwen3ForCausalLM",
      "mistral", "MistralForCausalLM",
      "phi3", "Phi3ForCausalLM");

  private static final Set<String> SHARED = Set.of("vocab_size", "hidden_size",
      "intermediate_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
      "hidden_act", "max_position_embeddings", "rms_norm_eps", "tie_word_embeddings",
      "eos_token_id", "rope_parameters");

  /** Per model_type, transformers 5.18's config keys: what this reader makes of each. */
  static final Map<String, ConfigKeys> KEYS = Map.of(
      "llama", keys("llama", Set.of("attention_bias", "mlp_bias", "head_dim"), Map.of(
          "pretraining_tp", "transformers 5 no longer reads it (4.x summed the projections in"
              + " slices, the same products)")),
      "qwen2", keys("qwen2", Set.of("use_sliding_window", "sliding_window",
          "max_window_layers", "layer_types"), Map.of()),
      "qwen3", keys("qwen3", Set.of("attention_bias", "head_dim", "use_sliding_window",
          "sliding_window", "max_window_layers", "layer_types"), Map.of()),
      "mistral", keys("mistral", Set.of("head_dim", "sliding_window"), Map.of()),
      "phi3", keys("phi3", Set.of("sliding_window"), Map.of(
          "embd_pdrop", "dropout is off at inference",
          "resid_pdrop", "dropout is off at inference")));

  private LlamaConfigReader() {}

  private static ConfigKeys keys(String type, Set<String> read, Map<String, String> inert) {
    Set<String> r = new java.util.HashSet<>(read);
    r.addAll(SHARED);
    r.addAll(ConfigKeys.LEGACY);
    r.add("original_max_position_embeddings"); // a top-level one wins for llama3/yarn/longrope
    Map<String, String> i = new java.util.HashMap<>(inert);
    i.putAll(ConfigKeys.DECODER_INERT);
    return ConfigKeys.of(type, r, i);
  }

  static LlamaConfig read(JsonNode c, Path file) {
    String type = c.path("model_type").asText();
    JsonNode architectures = c.path("architectures");
    if (architectures.isArray() && !architectures.isEmpty()
        && !architectures.get(0).asText().equals(ARCHITECTURES.get(type))) {
      throw new ModelLoadException(file, "architectures " + architectures.get(0).asText()
          + " is not a " + type + " language model (need " + ARCHITECTURES.get(type) + ")");
    }
    KEYS.get(type).logUnknown(c, file);
    if (type.equals("phi3") && c.hasNonNull("quantization_config")) {
      throw new ModelLoadException(file, "quantization_config on phi3 is not supported: its"
          + " fused qkv_proj / gate_up_proj are split at load only for float weights");
    }
    ConfigKeys.checkDtype(c, file);
    if (ConfigValues.bool(c, file, "is_encoder_decoder", false)) {
      throw new ModelLoadException(file, "is_encoder_decoder true is not supported (a decoder)");
    }
    String act = c.path("hidden_act").asText("silu");
    if (!act.equals("silu")) {
      throw new ModelLoadException(file, "hidden_act " + act + " is not supported (silu)");
    }
    int hidden = ConfigValues.intField(c, file, "hidden_size");
    int heads = ConfigValues.intField(c, file, "num_attention_heads");
    int layers = ConfigValues.intField(c, file, "num_hidden_layers");
    int kvHeads = c.hasNonNull("num_key_value_heads")
        ? ConfigValues.intField(c, file, "num_key_value_heads") : heads;
    int headDim = c.hasNonNull("head_dim") ? ConfigValues.intField(c, file, "head_dim")
        : type.equals("qwen3") ? 128 : hidden / heads;
    int positions = ConfigValues.intField(c, file, "max_position_embeddings");
    LlamaConfig.Rope rope = rope(c, file, headDim);
    List<Integer> windows = SlidingWindows.read(c, file, type, layers, positions);
    boolean attentionBias = ConfigValues.bool(c, file, "attention_bias", false);
    boolean qwen2 = type.equals("qwen2");
    try {
      return new LlamaConfig(
          type,
          layers,
          hidden,
          heads,
          kvHeads,
          headDim,
          ConfigValues.intField(c, file, "intermediate_size"),
          positions,
          ConfigValues.intField(c, file, "vocab_size"),
          c.path("rms_norm_eps").asDouble(1e-6),
          rope,
          qwen2 || attentionBias,          // Qwen2's q/k/v always carry a bias, its o_proj never
          !qwen2 && attentionBias,
          ConfigValues.bool(c, file, "mlp_bias", false),
          type.equals("qwen3"),
          ConfigValues.bool(c, file, "tie_word_embeddings", false),
          windows);
    } catch (IllegalArgumentException e) {
      throw new ModelLoadException(file, e.getMessage(), e);
    }
  }

  /**
   * The one rope every layer uses. A per-layer-type {@code rope_parameters} is accepted when all
   * its dicts agree (the Llama family rotates every layer alike); a rotary over part of the head
   * is refused, as the family's transformers models cannot compute it either.
   */
  private static LlamaConfig.Rope rope(JsonNode c, Path file, int headDim) {
    boolean phi3 = c.path("model_type").asText().equals("phi3");
    Map<String, LlamaConfig.Rope> ropes = RopeParameters.read(phi3 ? phi3Rope(c) : c, file,
        10000, headDim);
    LlamaConfig.Rope rope = ropes.values().iterator().next();
    if (new java.util.HashSet<>(ropes.values()).size() > 1) {
      throw new ModelLoadException(file, "rope_parameters differ by layer type " + ropes.keySet()
          + "; the " + c.path("model_type").asText() + " family rotates every layer alike");
    }
    if (phi3 && !Set.of("default", "longrope").contains(rope.type())) {
      throw new ModelLoadException(file, "rope_type " + rope.type() + " is not a phi3 rope"
          + " (default or longrope)");
    }
    if (!phi3 && rope.partialRotaryFactor() != 1.0) {
      throw new ModelLoadException(file, "partial_rotary_factor " + rope.partialRotaryFactor()
          + " is not supported for " + c.path("model_type").asText()
          + " (rotary over the whole head)");
    }
    return rope;
  }

  /**
   * Phi3Config renames the rope types Phi-3's first checkpoints wrote, {@code su} and {@code
   * yarn}, to {@code longrope} (its {@code convert_rope_params_to_dict}).
   */
  private static JsonNode phi3Rope(JsonNode c) {
    com.fasterxml.jackson.databind.node.ObjectNode copy =
        ((com.fasterxml.jackson.databind.node.ObjectNode) c).deepCopy();
    for (String key : new String[] {"rope_scaling", "rope_parameters"}) {
      JsonNode p = copy.get(key);
      if (p != null && p.isObject()) {
        String type = p.path("rope_type").asText(p.path("type").asText(""));
        if (type.equals("su") || type.equals("yarn")) {
          com.fasterxml.jackson.databind.node.ObjectNode fixed =
              ((com.fasterxml.jackson.databind.node.ObjectNode) p).deepCopy();
          fixed.remove("type");
          fixed.put("rope_type", "longrope");
          copy.set(key, fixed);
        }
      }
    }
    return copy;
  }

}
