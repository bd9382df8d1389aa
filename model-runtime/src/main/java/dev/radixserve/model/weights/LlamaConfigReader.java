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
 * model_type}. Every key of the family's transformers config class is in {@link #KEYS}: read here,
 * or inert with the reason. A value the graph does not compute (another activation, an unknown
 * rope type, a rotary over part of the head) is refused by name and value.
 */
final class LlamaConfigReader {

  /** model_type → the architecture class Hugging Face builds for it. */
  static final Map<String, String> ARCHITECTURES = Map.of(
      "llama", "LlamaForCausalLM",
      "qwen2", "Qwen2ForCausalLM",
      "qwen3", "Qwen3ForCausalLM",
      "mistral", "MistralForCausalLM");

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
      "mistral", keys("mistral", Set.of("head_dim", "sliding_window"), Map.of()));

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
    ConfigKeys.checkDtype(c, file);
    if (bool(c, file, "is_encoder_decoder", false)) {
      throw new ModelLoadException(file, "is_encoder_decoder true is not supported (a decoder)");
    }
    String act = c.path("hidden_act").asText("silu");
    if (!act.equals("silu")) {
      throw new ModelLoadException(file, "hidden_act " + act + " is not supported (silu)");
    }
    int hidden = intField(c, file, "hidden_size");
    int heads = intField(c, file, "num_attention_heads");
    int layers = intField(c, file, "num_hidden_layers");
    int kvHeads = c.hasNonNull("num_key_value_heads")
        ? intField(c, file, "num_key_value_heads") : heads;
    int headDim = c.hasNonNull("head_dim") ? intField(c, file, "head_dim")
        : type.equals("qwen3") ? 128 : hidden / heads;
    int positions = intField(c, file, "max_position_embeddings");
    LlamaConfig.Rope rope = rope(c, file, headDim);
    if (rope.type().equals("longrope") && rope.originalMaxPositions() < positions) {
      // transformers rotates with long_factor once a pass exceeds the original length, which a
      // cache of rotated keys cannot follow (LlamaConfig.Rope): serve the original length
      positions = rope.originalMaxPositions();
    }
    List<Integer> windows = SlidingWindows.read(c, file, type, layers, positions);
    boolean attentionBias = bool(c, file, "attention_bias", false);
    boolean qwen2 = type.equals("qwen2");
    try {
      return new LlamaConfig(
          type,
          layers,
          hidden,
          heads,
          kvHeads,
          headDim,
          intField(c, file, "intermediate_size"),
          positions,
          intField(c, file, "vocab_size"),
          c.path("rms_norm_eps").asDouble(1e-6),
          rope,
          qwen2 || attentionBias,          // Qwen2's q/k/v always carry a bias, its o_proj never
          !qwen2 && attentionBias,
          bool(c, file, "mlp_bias", false),
          type.equals("qwen3"),
          bool(c, file, "tie_word_embeddings", false),
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
    Map<String, LlamaConfig.Rope> ropes = RopeParameters.read(c, file, 10000, headDim);
    LlamaConfig.Rope rope = ropes.values().iterator().next();
    if (new java.util.HashSet<>(ropes.values()).size() > 1) {
      throw new ModelLoadException(file, "rope_parameters differ by layer type " + ropes.keySet()
          + "; the " + c.path("model_type").asText() + " family rotates every layer alike");
    }
    if (rope.partialRotaryFactor() != 1.0) {
      throw new ModelLoadException(file, "partial_rotary_factor " + rope.partialRotaryFactor()
          + " is not supported for " + c.path("model_type").asText()
          + " (rotary over the whole head)");
    }
    return rope;
  }

  static boolean bool(JsonNode c, Path file, String key, boolean absent) {
    JsonNode v = c.get(key);
    if (v == null || v.isNull()) {
      return absent;
    }
    if (!v.isBoolean()) {
      throw new ModelLoadException(file, key + " " + v + " is not a boolean");
    }
    return v.asBoolean();
  }

  static int intField(JsonNode c, Path file, String name) {
    JsonNode v = c.get(name);
    if (v == null || !v.isIntegralNumber() || !v.canConvertToInt()) {
      throw new ModelLoadException(file, "field " + name + " is missing or not an integer");
    }
    return v.asInt();
  }
}
