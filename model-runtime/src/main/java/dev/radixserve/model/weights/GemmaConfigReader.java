package dev.radixserve.model.weights;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
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
 * {@code rope_scaling}, {@code sliding_window_pattern}). Every key of the two classes is in
 * {@link #KEYS} ({@link ConfigKeys}): read here (and refused by name and value where the graph
 * cannot compute it) or inert; the rope dicts are read by {@link RopeParameters}.
 */
final class GemmaConfigReader {

  /** model_type → the architecture class Hugging Face builds for it. */
  static final Map<String, String> ARCHITECTURES = Map.of(
      "gemma2", "Gemma2ForCausalLM",
      "gemma3_text", "Gemma3ForCausalLM");
  /** Gemma 3 with its vision tower: refused by name. */
  static final String MULTIMODAL = "gemma3";

  /** The keys both config classes read (besides ConfigKeys' common and legacy ones). */
  private static final Set<String> READ = Set.of("vocab_size", "hidden_size",
      "intermediate_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
      "head_dim", "hidden_activation", "max_position_embeddings", "rms_norm_eps",
      "tie_word_embeddings", "rope_parameters", "attention_bias", "query_pre_attn_scalar",
      "sliding_window", "layer_types", "final_logit_softcapping", "attn_logit_softcapping",
      "use_bidirectional_attention", "eos_token_id");
  /**
   * Per model_type, transformers 5.18's config keys: what this reader makes of each. Keys the
   * hub's configs carry beyond the class (Gemma 2's {@code hidden_act} beside {@code
   * hidden_activation}, {@code cache_implementation}) are logged and ignored, as transformers
   * ignores them ({@link ConfigKeys}).
   */
  static final Map<String, ConfigKeys> KEYS = Map.of(
      "gemma2", keys("gemma2", Set.of(), Map.of()),
      // rope_local_base_freq and sliding_window_pattern: transformers 4's spellings, still read
      "gemma3_text", keys("gemma3_text", Set.of("rope_local_base_freq", "sliding_window_pattern"),
          Map.of("_sliding_window_pattern", "transformers 5 writes its private copy of the"
              + " pattern; layer_types (or sliding_window_pattern) says it")));

  private static ConfigKeys keys(String type, Set<String> read, Map<String, String> inert) {
    Set<String> r = new java.util.HashSet<>(read);
    r.addAll(READ);
    r.addAll(ConfigKeys.LEGACY);
    Map<String, String> i = new java.util.HashMap<>(inert);
    i.putAll(ConfigKeys.DECODER_INERT);
    return ConfigKeys.of(type, r, i);
  }

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
    KEYS.get(type).logUnknown(c, file);
    ConfigKeys.checkDtype(c, file);
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
          rope(c, file, gemma3, integer(c, file, "head_dim", 256)),
          ConfigValues.bool(c, file, "attention_bias", false),
          gemma3,
          ConfigValues.bool(c, file, "tie_word_embeddings", true));
    } catch (IllegalArgumentException e) {
      throw new ModelLoadException(file, e.getMessage(), e);
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

  /**
   * Each layer type's rope, read by {@link RopeParameters}: Gemma 2's one rope ({@code
   * rope_parameters} or {@code rope_theta} / {@code rope_scaling}) for every layer; Gemma 3's
   * per layer type after {@code Gemma3TextConfig.convert_rope_params_to_dict}: {@code
   * rope_scaling} (the transformers 4 form) updates the full layers' dict, and a dict without a
   * theta takes {@code rope_theta} (full, default 1,000,000) or {@code rope_local_base_freq}
   * (sliding, default 10,000). A rotary over part of the head is refused.
   */
  private static Map<LayerType, LlamaConfig.Rope> rope(JsonNode c, Path file, boolean gemma3,
      int headDim) {
    Map<String, LlamaConfig.Rope> ropes = gemma3
        ? RopeParameters.read(gemma3RopeParameters(c, file), file, 10_000, headDim)
        : RopeParameters.read(c, file, 10_000, headDim);
    if (!gemma3 && new java.util.HashSet<>(ropes.values()).size() > 1) {
      throw new ModelLoadException(file, "rope_parameters differ by layer type " + ropes.keySet()
          + "; Gemma 2 rotates every layer alike");
    }
    Map<LayerType, LlamaConfig.Rope> m = new EnumMap<>(LayerType.class);
    for (Map.Entry<String, LlamaConfig.Rope> e : ropes.entrySet()) {
      if (e.getValue().partialRotaryFactor() != 1.0) {
        throw new ModelLoadException(file, "partial_rotary_factor "
            + e.getValue().partialRotaryFactor() + " is not supported for "
            + c.path("model_type").asText() + " (rotary over the whole head)");
      }
      if (e.getKey().equals(RopeParameters.ALL_LAYERS)) {
        for (LayerType t : LayerType.values()) {
          m.put(t, e.getValue());
        }
      } else {
        try {
          m.put(LayerType.of(e.getKey()), e.getValue());
        } catch (IllegalArgumentException x) {
          throw new ModelLoadException(file, "rope_parameters: " + x.getMessage(), x);
        }
      }
    }
    return m;
  }

  /** {@code c} with Gemma 3's rope in transformers 5's per-layer-type form, for RopeParameters. */
  private static JsonNode gemma3RopeParameters(JsonNode c, Path file) {
    JsonNode given = c.get("rope_parameters");
    if (given != null && !given.isNull() && !given.isObject()) {
      throw new ModelLoadException(file, "rope_parameters " + given + " is not an object");
    }
    if (given != null && given.isObject()) {
      for (Iterator<String> it = given.fieldNames(); it.hasNext(); ) {
        String key = it.next();
        if (!key.equals("sliding_attention") && !key.equals("full_attention")) {
          throw new ModelLoadException(file, "rope_parameters key " + key + " is not a layer"
              + " type (sliding_attention, full_attention)");
        }
      }
    }
    ObjectNode full = dict(given, "full_attention", file);
    JsonNode scaling = c.get("rope_scaling");
    if (scaling != null && !scaling.isNull()) {
      if (!scaling.isObject()) {
        throw new ModelLoadException(file, "rope_scaling " + scaling + " is not an object");
      }
      full.setAll((ObjectNode) scaling);
    }
    if (!full.has("rope_theta")) {
      full.put("rope_theta", number(c, file, "rope_theta", 1_000_000));
    }
    ObjectNode sliding = dict(given, "sliding_attention", file);
    if (!sliding.has("rope_theta")) {
      sliding.put("rope_theta", number(c, file, "rope_local_base_freq", 10_000));
    }
    ObjectNode copy = c.deepCopy();
    copy.remove(List.of("rope_scaling", "rope_theta"));
    ObjectNode params = copy.putObject("rope_parameters");
    params.set("sliding_attention", sliding);
    params.set("full_attention", full);
    copy.putArray("layer_types").add("sliding_attention").add("full_attention");
    return copy;
  }

  private static ObjectNode dict(JsonNode params, String layerType, Path file) {
    JsonNode d = params == null ? null : params.get(layerType);
    if (d == null || d.isNull()) {
      return JsonNodeFactory.instance.objectNode().put("rope_type", "default");
    }
    if (!d.isObject()) {
      throw new ModelLoadException(file, "rope_parameters." + layerType + " " + d
          + " is not an object");
    }
    return d.deepCopy();
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
    if (ConfigValues.bool(c, file, key, false)) {
      throw new ModelLoadException(file, key + " true is not supported: " + why);
    }
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

  /** The keys of {@code type}'s table, for tests. */
  static Set<String> keys(String type) {
    return KEYS.get(type).keys();
  }
}
