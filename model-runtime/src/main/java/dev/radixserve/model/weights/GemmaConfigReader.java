package dev.radixserve.model.weights;

import com.fasterxml.jackson.databind.JsonNode;
import dev.radixserve.model.GemmaConfig;
import dev.radixserve.model.GemmaConfig.LayerType;
import dev.radixserve.model.LlamaConfig;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reads a Gemma 2 or Gemma 3 (text) {@code config.json} into a {@link GemmaConfig} as
 * transformers 5.18's {@code Gemma2Config} / {@code Gemma3TextConfig} read it: their defaults
 * for absent keys, both the transformers 5 ({@code rope_parameters}, per layer type for Gemma 3)
 * and the transformers 4 form ({@code rope_theta}, {@code rope_local_base_freq},
 * {@code rope_scaling}, {@code sliding_window_pattern}). Every key is in {@link #KEYS}: read,
 * known inert, or refused by name and value; a key that is in none is refused.
 */
final class GemmaConfigReader {

  /** model_type → the architecture class Hugging Face builds for it. */
  static final Map<String, String> ARCHITECTURES = Map.of(
      "gemma2", "Gemma2ForCausalLM",
      "gemma3_text", "Gemma3ForCausalLM");
  /** Gemma 3 with its vision tower: refused by name. */
  static final String MULTIMODAL = "gemma3";

  /** What a key does here. */
  enum Handling {
    /** read into the {@link GemmaConfig} (or by {@link HfConfig}: eos, quantization) */
    READ,
    /** cannot change what the model computes at inference */
    INERT,
  }

  /** Keys of transformers' {@code PreTrainedConfig} and what the hub's Gemma configs carry. */
  private static final Map<String, Handling> COMMON = Map.ofEntries(
      Map.entry("model_type", Handling.READ),
      Map.entry("architectures", Handling.READ),
      Map.entry("is_encoder_decoder", Handling.READ),
      Map.entry("quantization_config", Handling.READ),
      Map.entry("eos_token_id", Handling.READ),
      Map.entry("_name_or_path", Handling.INERT),
      Map.entry("transformers_version", Handling.INERT),
      // the weights' dtype is the safetensors' own; the graph's is the server's choice
      Map.entry("dtype", Handling.INERT),
      Map.entry("torch_dtype", Handling.INERT),
      Map.entry("chunk_size_feed_forward", Handling.INERT), // the same sums, in chunks
      Map.entry("id2label", Handling.INERT),
      Map.entry("label2id", Handling.INERT),
      Map.entry("problem_type", Handling.INERT),
      Map.entry("output_attentions", Handling.INERT),
      Map.entry("output_hidden_states", Handling.INERT),
      Map.entry("return_dict", Handling.INERT),
      Map.entry("use_cache", Handling.INERT),
      Map.entry("bos_token_id", Handling.INERT), // the tokenizer adds BOS
      Map.entry("pad_token_id", Handling.INERT),
      Map.entry("initializer_range", Handling.INERT),
      Map.entry("attention_dropout", Handling.INERT), // dropout is off at inference
      Map.entry("cache_implementation", Handling.INERT), // transformers' cache class
      Map.entry("vocab_size", Handling.READ),
      Map.entry("hidden_size", Handling.READ),
      Map.entry("intermediate_size", Handling.READ),
      Map.entry("num_hidden_layers", Handling.READ),
      Map.entry("num_attention_heads", Handling.READ),
      Map.entry("num_key_value_heads", Handling.READ),
      Map.entry("head_dim", Handling.READ),
      Map.entry("hidden_activation", Handling.READ),
      Map.entry("max_position_embeddings", Handling.READ),
      Map.entry("rms_norm_eps", Handling.READ),
      Map.entry("tie_word_embeddings", Handling.READ),
      Map.entry("rope_parameters", Handling.READ),
      Map.entry("rope_theta", Handling.READ),
      Map.entry("rope_scaling", Handling.READ),
      Map.entry("attention_bias", Handling.READ),
      Map.entry("query_pre_attn_scalar", Handling.READ),
      Map.entry("sliding_window", Handling.READ),
      Map.entry("layer_types", Handling.READ),
      Map.entry("final_logit_softcapping", Handling.READ),
      Map.entry("attn_logit_softcapping", Handling.READ),
      Map.entry("use_bidirectional_attention", Handling.READ));

  /** Per model_type: {@link #COMMON} and the family's own keys. */
  static final Map<String, Map<String, Handling>> KEYS = Map.of(
      "gemma2", with(COMMON, Map.of(
          // Gemma 2's first hub configs carry both; transformers reads hidden_activation only
          "hidden_act", Handling.INERT)),
      "gemma3_text", with(COMMON, Map.of(
          "rope_local_base_freq", Handling.READ,
          "sliding_window_pattern", Handling.READ,
          // transformers 5 writes its private copy of the pattern; layer_types says it
          "_sliding_window_pattern", Handling.INERT)));

  private GemmaConfigReader() {}

  static boolean handles(String modelType) {
    return ARCHITECTURES.containsKey(modelType) || modelType.equals(MULTIMODAL);
  }

  static GemmaConfig read(JsonNode c, Path file) {
    String type = c.path("model_type").asText();
    if (type.equals(MULTIMODAL)) {
      throw new ModelLoadException(file, "model_type gemma3 (Gemma3ForConditionalGeneration,"
          + " text and images) is not supported: only text-only Gemma 3 checkpoints"
          + " (model_type gemma3_text, Gemma3ForCausalLM) are served");
    }
    checkKeys(c, file, type);
    JsonNode architectures = c.path("architectures");
    if (architectures.isArray() && !architectures.isEmpty()
        && !architectures.get(0).asText().equals(ARCHITECTURES.get(type))) {
      throw new ModelLoadException(file, "architectures " + architectures.get(0).asText()
          + " is not a " + type + " language model (need " + ARCHITECTURES.get(type) + ")");
    }
    refuseTrue(c, file, "is_encoder_decoder", "an encoder-decoder model is not supported");
    refuseTrue(c, file, "use_bidirectional_attention",
        "bidirectional (non-causal) attention is not implemented");
    if (c.hasNonNull("quantization_config")) {
      throw new ModelLoadException(file, "quantization_config "
          + c.get("quantization_config").path("quant_method").asText("?")
          + " is not supported for " + type + " (float checkpoints only)");
    }
    JsonNode act = c.get("hidden_activation");
    if (act != null && !(act.isTextual() && act.asText().equals("gelu_pytorch_tanh"))) {
      throw new ModelLoadException(file, "hidden_activation " + c.get("hidden_activation")
          + " is not supported (gelu_pytorch_tanh)");
    }
    boolean gemma3 = type.equals("gemma3_text");
    double attnSoftcap = cap(c, file, "attn_logit_softcapping", gemma3 ? 0 : 50.0);
    if (gemma3 && attnSoftcap != 0) {
      // transformers' Gemma3Attention never passes it to the attention (vLLM's does): the two
      // references disagree, so no answer here would be the reference's
      throw new ModelLoadException(file, "attn_logit_softcapping " + attnSoftcap
          + " is not supported for gemma3_text: transformers ignores it, vLLM applies it (null)");
    }
    int layers = integer(c, file, "num_hidden_layers", 26);
    JsonNode window = c.get("sliding_window");
    try {
      return new GemmaConfig(
          type,
          layers,
          integer(c, file, "hidden_size", 2304),
          integer(c, file, "num_attention_heads", 8),
          integer(c, file, "num_key_value_heads", 4),
          integer(c, file, "head_dim", 256),
          integer(c, file, "intermediate_size", 9216),
          integer(c, file, "max_position_embeddings", gemma3 ? 131_072 : 8192),
          integer(c, file, "vocab_size", gemma3 ? 262_208 : 256_000),
          number(c, file, "rms_norm_eps", 1e-6),
          number(c, file, "query_pre_attn_scalar", 256),
          attnSoftcap,
          cap(c, file, "final_logit_softcapping", gemma3 ? 0 : 30.0),
          window == null ? 4096 : window.isNull() ? 0 : integer(c, file, "sliding_window", 0),
          layerTypes(c, file, layers, gemma3),
          gemma3 ? gemma3Rope(c, file) : gemma2Rope(c, file),
          bool(c, file, "attention_bias", false),
          gemma3,
          bool(c, file, "tie_word_embeddings", true));
    } catch (IllegalArgumentException e) {
      throw new ModelLoadException(file, e.getMessage(), e);
    }
  }

  private static void checkKeys(JsonNode c, Path file, String type) {
    Map<String, Handling> known = KEYS.get(type);
    for (Iterator<String> it = c.fieldNames(); it.hasNext(); ) {
      String key = it.next();
      if (!known.containsKey(key)) {
        throw new ModelLoadException(file, "key " + key + " " + c.get(key) + " is not one of "
            + ARCHITECTURES.get(type) + "'s config keys that radixserve knows (refused rather"
            + " than ignored)");
      }
    }
  }

  /**
   * {@code layer_types}, else transformers' default: Gemma 2 alternates sliding and full
   * (layer 0 sliding); Gemma 3 makes every {@code sliding_window_pattern}-th layer full.
   */
  private static List<LayerType> layerTypes(JsonNode c, Path file, int layers, boolean gemma3) {
    JsonNode given = c.get("layer_types");
    List<LayerType> types = new ArrayList<>();
    if (given != null && !given.isNull()) {
      if (!given.isArray()) {
        throw new ModelLoadException(file, "layer_types " + given + " is not a list");
      }
      for (JsonNode t : given) {
        try {
          types.add(LayerType.of(t.asText()));
        } catch (IllegalArgumentException e) {
          throw new ModelLoadException(file, "layer_types: " + e.getMessage(), e);
        }
      }
      return types;
    }
    int pattern = gemma3 ? integer(c, file, "sliding_window_pattern", 6) : 2;
    if (pattern <= 0) {
      throw new ModelLoadException(file, "sliding_window_pattern " + pattern + " is not positive");
    }
    for (int i = 0; i < layers; i++) {
      types.add((i + 1) % pattern != 0 ? LayerType.SLIDING_ATTENTION : LayerType.FULL_ATTENTION);
    }
    return types;
  }

  /** One rope for every layer: {@code rope_parameters}, else {@code rope_scaling} + {@code rope_theta}. */
  private static Map<LayerType, LlamaConfig.Rope> gemma2Rope(JsonNode c, Path file) {
    JsonNode params = c.hasNonNull("rope_parameters") ? c.get("rope_parameters")
        : c.get("rope_scaling");
    double theta = c.hasNonNull("rope_theta") ? number(c, file, "rope_theta", 0) : 10_000;
    LlamaConfig.Rope rope = rope(params, theta, file, "rope_parameters");
    Map<LayerType, LlamaConfig.Rope> m = new EnumMap<>(LayerType.class);
    m.put(LayerType.SLIDING_ATTENTION, rope);
    m.put(LayerType.FULL_ATTENTION, rope);
    return m;
  }

  /**
   * Per layer type, as {@code Gemma3TextConfig.convert_rope_params_to_dict}: {@code
   * rope_parameters.sliding_attention} / {@code .full_attention}; {@code rope_scaling} (the
   * transformers 4 form) applies to the full layers; thetas absent there come from {@code
   * rope_theta} (full, default 1,000,000) and {@code rope_local_base_freq} (sliding, 10,000).
   */
  private static Map<LayerType, LlamaConfig.Rope> gemma3Rope(JsonNode c, Path file) {
    JsonNode params = c.path("rope_parameters");
    if (c.hasNonNull("rope_parameters") && !params.isObject()) {
      throw new ModelLoadException(file, "rope_parameters " + params + " is not an object");
    }
    for (Iterator<String> it = params.fieldNames(); it.hasNext(); ) {
      String key = it.next();
      if (!key.equals("sliding_attention") && !key.equals("full_attention")) {
        throw new ModelLoadException(file, "rope_parameters key " + key + " is not a layer type"
            + " (sliding_attention, full_attention)");
      }
    }
    JsonNode full = params.get("full_attention");
    if (c.hasNonNull("rope_scaling")) {
      full = full == null || full.isNull() ? c.get("rope_scaling").deepCopy()
          : merge(full, c.get("rope_scaling"));
    }
    Map<LayerType, LlamaConfig.Rope> m = new EnumMap<>(LayerType.class);
    m.put(LayerType.FULL_ATTENTION, rope(full,
        c.hasNonNull("rope_theta") ? number(c, file, "rope_theta", 0) : 1_000_000, file,
        "rope_parameters.full_attention"));
    m.put(LayerType.SLIDING_ATTENTION, rope(params.get("sliding_attention"),
        c.hasNonNull("rope_local_base_freq") ? number(c, file, "rope_local_base_freq", 0)
            : 10_000, file, "rope_parameters.sliding_attention"));
    return m;
  }

  private static JsonNode merge(JsonNode base, JsonNode update) {
    com.fasterxml.jackson.databind.node.ObjectNode m = base.deepCopy();
    m.setAll((com.fasterxml.jackson.databind.node.ObjectNode) update);
    return m;
  }

  /**
   * One rope dictionary (null: the default rope) with {@code theta} where it names none: the
   * types {@link LlamaConfig.Rope} computes; any other is refused by name.
   */
  private static LlamaConfig.Rope rope(JsonNode s, double theta, Path file, String where) {
    if (s == null || s.isNull()) {
      return LlamaConfig.Rope.plain(theta);
    }
    if (!s.isObject()) {
      throw new ModelLoadException(file, where + " " + s + " is not an object");
    }
    if (s.hasNonNull("rope_theta")) {
      theta = positive(s, file, where, "rope_theta");
    }
    if (s.hasNonNull("partial_rotary_factor") && s.get("partial_rotary_factor").asDouble() != 1) {
      throw new ModelLoadException(file, where + " partial_rotary_factor "
          + s.get("partial_rotary_factor") + " is not supported (rotary over the whole head)");
    }
    String type = s.path("rope_type").asText(s.path("type").asText("default"));
    return switch (type) {
      case "default" -> LlamaConfig.Rope.plain(theta);
      case "linear" -> new LlamaConfig.Rope("linear", theta, positive(s, file, where, "factor"),
          0, 0, 0);
      case "llama3" -> new LlamaConfig.Rope("llama3", theta, positive(s, file, where, "factor"),
          positive(s, file, where, "low_freq_factor"),
          positive(s, file, where, "high_freq_factor"),
          (int) positive(s, file, where, "original_max_position_embeddings"));
      default -> throw new ModelLoadException(file, where + " rope_type " + type
          + " is not supported (default, linear or llama3)");
    };
  }

  private static double positive(JsonNode s, Path file, String where, String key) {
    JsonNode v = s.get(key);
    if (v == null || !v.isNumber() || v.asDouble() <= 0) {
      throw new ModelLoadException(file, where + " " + key + " " + v + " is not a positive number");
    }
    return v.asDouble();
  }

  /** A soft-cap: null means none; absent means the class default. */
  private static double cap(JsonNode c, Path file, String key, double absent) {
    JsonNode v = c.get(key);
    if (v == null) {
      return absent;
    }
    if (v.isNull()) {
      return 0;
    }
    if (!v.isNumber() || v.asDouble() <= 0) {
      throw new ModelLoadException(file, key + " " + v + " is not a positive number or null");
    }
    return v.asDouble();
  }

  private static void refuseTrue(JsonNode c, Path file, String key, String why) {
    if (bool(c, file, key, false)) {
      throw new ModelLoadException(file, key + " true is not supported: " + why);
    }
  }

  private static boolean bool(JsonNode c, Path file, String key, boolean absent) {
    JsonNode v = c.get(key);
    if (v == null || v.isNull()) {
      return absent;
    }
    if (!v.isBoolean()) {
      throw new ModelLoadException(file, key + " " + v + " is not a boolean");
    }
    return v.asBoolean();
  }

  private static double number(JsonNode c, Path file, String key, double absent) {
    JsonNode v = c.get(key);
    if (v == null) {
      return absent;
    }
    if (!v.isNumber()) {
      throw new ModelLoadException(file, key + " " + v + " is not a number");
    }
    return v.asDouble();
  }

  private static int integer(JsonNode c, Path file, String key, int absent) {
    JsonNode v = c.get(key);
    if (v == null) {
      return absent;
    }
    if (!v.isIntegralNumber() || !v.canConvertToInt()) {
      throw new ModelLoadException(file, key + " " + v + " is not an integer");
    }
    return v.asInt();
  }

  private static Map<String, Handling> with(Map<String, Handling> a, Map<String, Handling> b) {
    Map<String, Handling> m = new java.util.HashMap<>(a);
    m.putAll(b);
    return Map.copyOf(m);
  }

  /** The keys of {@code type}'s table, for tests. */
  static Set<String> keys(String type) {
    return KEYS.get(type).keySet();
  }
}
