package dev.radixserve.model.weights;

import com.fasterxml.jackson.databind.JsonNode;
import dev.radixserve.model.LlamaConfig;
import java.nio.file.Path;
import java.util.Map;

/**
 * Reads a Llama-family {@code config.json} into a {@link LlamaConfig}, with Hugging Face's
 * defaults per {@code model_type}. A key whose value would make the model compute something the
 * graph does not (a binding sliding window, an unknown rope type, another activation) is refused
 * by name and value.
 */
final class LlamaConfigReader {

  /** model_type → the architecture class Hugging Face builds for it. */
  static final Map<String, String> ARCHITECTURES = Map.of(
      "llama", "LlamaForCausalLM",
      "qwen2", "Qwen2ForCausalLM",
      "qwen3", "Qwen3ForCausalLM",
      "mistral", "MistralForCausalLM");

  private LlamaConfigReader() {}

  static LlamaConfig read(JsonNode c, Path file) {
    String type = c.path("model_type").asText();
    JsonNode architectures = c.path("architectures");
    if (architectures.isArray() && !architectures.isEmpty()
        && !architectures.get(0).asText().equals(ARCHITECTURES.get(type))) {
      throw new ModelLoadException(file, "architectures " + architectures.get(0).asText()
          + " is not a " + type + " language model (need " + ARCHITECTURES.get(type) + ")");
    }
    String act = c.path("hidden_act").asText("silu");
    if (!act.equals("silu")) {
      throw new ModelLoadException(file, "hidden_act " + act + " is not supported (silu)");
    }
    int hidden = intField(c, file, "hidden_size");
    int heads = intField(c, file, "num_attention_heads");
    int kvHeads = c.hasNonNull("num_key_value_heads")
        ? intField(c, file, "num_key_value_heads") : heads;
    int headDim = c.hasNonNull("head_dim") ? intField(c, file, "head_dim")
        : type.equals("qwen3") ? 128 : hidden / heads;
    int positions = intField(c, file, "max_position_embeddings");
    checkSlidingWindow(c, file, type, positions);
    checkUnsupported(c, file);
    boolean attentionBias = bool(c, file, "attention_bias", false);
    boolean qwen2 = type.equals("qwen2");
    try {
      return new LlamaConfig(
          type,
          intField(c, file, "num_hidden_layers"),
          hidden,
          heads,
          kvHeads,
          headDim,
          intField(c, file, "intermediate_size"),
          positions,
          intField(c, file, "vocab_size"),
          c.path("rms_norm_eps").asDouble(1e-6),
          rope(c, file),
          qwen2 || attentionBias,          // Qwen2's q/k/v always carry a bias, its o_proj never
          !qwen2 && attentionBias,
          bool(c, file, "mlp_bias", false),
          type.equals("qwen3"),
          bool(c, file, "tie_word_embeddings", false));
    } catch (IllegalArgumentException e) {
      throw new ModelLoadException(file, e.getMessage(), e);
    }
  }

  /**
   * Mistral applies {@code sliding_window} whenever set; Qwen2/3 only with {@code
   * use_sliding_window}. A window as long as the model's positions never binds.
   */
  private static void checkSlidingWindow(JsonNode c, Path file, String type, int positions) {
    JsonNode window = c.get("sliding_window");
    boolean used = switch (type) {
      case "mistral" -> true;
      case "qwen2", "qwen3" -> bool(c, file, "use_sliding_window", false);
      default -> window != null && !window.isNull(); // Llama has none; refuse one that claims it
    };
    if (used && window != null && !window.isNull()
        && (!window.canConvertToInt() || window.asInt() < positions)) {
      throw new ModelLoadException(file, "sliding_window " + window + " is not supported:"
          + " sliding-window attention is not implemented (null or >= max_position_embeddings "
          + positions + " is)");
    }
  }

  private static void checkUnsupported(JsonNode c, Path file) {
    JsonNode partial = c.get("partial_rotary_factor");
    if (partial != null && !partial.isNull() && partial.asDouble() != 1.0) {
      throw new ModelLoadException(file, "partial_rotary_factor " + partial
          + " is not supported (rotary over the whole head)");
    }
    JsonNode pretrainingTp = c.get("pretraining_tp");
    if (pretrainingTp != null && !pretrainingTp.isNull() && pretrainingTp.asInt() != 1) {
      throw new ModelLoadException(file, "pretraining_tp " + pretrainingTp
          + " is not supported (1: the usual, exact projections)");
    }
  }

  private static LlamaConfig.Rope rope(JsonNode c, Path file) {
    double theta = c.path("rope_theta").asDouble(10000);
    JsonNode s = c.get("rope_scaling");
    if (s == null || s.isNull()) {
      return LlamaConfig.Rope.plain(theta);
    }
    String type = s.path("rope_type").asText(s.path("type").asText("default"));
    return switch (type) {
      case "default" -> LlamaConfig.Rope.plain(theta);
      case "linear" -> new LlamaConfig.Rope("linear", theta, number(s, file, "factor"), 0, 0, 0);
      case "llama3" -> new LlamaConfig.Rope("llama3", theta, number(s, file, "factor"),
          number(s, file, "low_freq_factor"), number(s, file, "high_freq_factor"),
          (int) number(s, file, "original_max_position_embeddings"));
      default -> throw new ModelLoadException(file, "rope_scaling rope_type " + type
          + " is not supported (default, linear or llama3)");
    };
  }

  private static double number(JsonNode s, Path file, String key) {
    JsonNode v = s.get(key);
    if (v == null || !v.isNumber() || v.asDouble() <= 0) {
      throw new ModelLoadException(file, "rope_scaling " + key + " " + v + " is not a positive number");
    }
    return v.asDouble();
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

  private static int intField(JsonNode c, Path file, String name) {
    JsonNode v = c.get(name);
    if (v == null || !v.isIntegralNumber() || !v.canConvertToInt()) {
      throw new ModelLoadException(file, "field " + name + " is missing or not an integer");
    }
    return v.asInt();
  }
}
