package dev.radixserve.model.weights;

import com.fasterxml.jackson.databind.JsonNode;
import dev.radixserve.model.LlamaConfig.Rope;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A config's rotary settings read as transformers 5 reads them ({@code
 * RotaryEmbeddingConfigMixin.convert_rope_params_to_dict} and {@code standardize_rope_params}):
 *
 * <ul>
 *   <li>transformers 5 writes {@code rope_parameters}: one dict, or one per layer type ({@code
 *       {"sliding_attention": {...}, "full_attention": {...}}}, keyed by the names in {@code
 *       layer_types});
 *   <li>transformers 4 wrote {@code rope_theta} and {@code rope_scaling} at the top level; a
 *       {@code rope_scaling} replaces {@code rope_parameters}, a top-level {@code rope_theta} or
 *       {@code partial_rotary_factor} fills a dict that lacks its own;
 *   <li>{@code type} is the old name of {@code rope_type}; a top-level {@code
 *       original_max_position_embeddings} (Phi-3's) wins over the dict's for llama3, yarn and
 *       longrope; the dict's defaults to {@code max_position_embeddings}.
 * </ul>
 *
 * Each rope type accepts the keys transformers' {@code _validate_*_rope_parameters} names; any
 * other key, or a rope type radixserve does not compute, refuses the load by name and value
 * (transformers would only warn, and a key it does not know is one nobody checked).
 */
final class RopeParameters {

  /** The key every layer type's rope shares when the config has one dict. */
  static final String ALL_LAYERS = "";

  private static final Set<String> COMMON = Set.of("rope_type", "type", "rope_theta",
      "partial_rotary_factor");
  private static final Map<String, Set<String>> KEYS = Map.of(
      "default", Set.of(),
      "linear", Set.of("factor"),
      "dynamic", Set.of("factor", "original_max_position_embeddings"),
      "llama3", Set.of("factor", "low_freq_factor", "high_freq_factor",
          "original_max_position_embeddings"),
      "yarn", Set.of("factor", "original_max_position_embeddings", "attention_factor",
          "beta_fast", "beta_slow", "mscale", "mscale_all_dim", "truncate"),
      "longrope", Set.of("short_factor", "long_factor", "factor", "attention_factor",
          "original_max_position_embeddings"));

  private RopeParameters() {}

  /**
   * The rope of each layer type the config names ({@link #ALL_LAYERS} when it has one dict).
   *
   * @param defaultTheta the config class's {@code default_theta} (10,000 for the Llama family)
   * @param headDim the rotated head size, to check longrope's factor lists
   */
  static Map<String, Rope> read(JsonNode c, Path file, double defaultTheta, int headDim) {
    JsonNode scaling = c.get("rope_scaling");
    JsonNode params = scaling != null && !scaling.isNull() ? scaling : c.get("rope_parameters");
    String source = scaling != null && !scaling.isNull() ? "rope_scaling" : "rope_parameters";
    if (params != null && !params.isNull() && !params.isObject()) {
      throw new ModelLoadException(file, source + " " + params + " is not an object");
    }
    double theta = c.hasNonNull("rope_theta") ? positive(c, file, "rope_theta", "") : defaultTheta;
    Set<String> layerTypes = new java.util.HashSet<>();
    c.path("layer_types").forEach(t -> layerTypes.add(t.asText()));
    Map<String, Rope> ropes = new LinkedHashMap<>();
    if (params == null || params.isNull() || params.isEmpty()) {
      ropes.put(ALL_LAYERS, one(c, file, null, source, theta, headDim));
      return ropes;
    }
    List<String> nested = new ArrayList<>();
    params.fieldNames().forEachRemaining(k -> {
      if (layerTypes.contains(k)) {
        nested.add(k);
      }
    });
    if (nested.isEmpty()) {
      ropes.put(ALL_LAYERS, one(c, file, params, source, theta, headDim));
      return ropes;
    }
    for (Iterator<String> it = params.fieldNames(); it.hasNext(); ) {
      String key = it.next();
      if (!nested.contains(key)) {
        throw new ModelLoadException(file, source + " mixes per-layer-type dicts with key " + key
            + " " + params.get(key));
      }
    }
    for (String layerType : nested) {
      ropes.put(layerType, one(c, file, params.get(layerType), source + "." + layerType, theta,
          headDim));
    }
    return ropes;
  }

  private static Rope one(JsonNode c, Path file, JsonNode p, String where, double topTheta,
      int headDim) {
    if (p == null || p.isNull()) {
      p = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();
    } else if (!p.isObject()) {
      throw new ModelLoadException(file, where + " " + p + " is not an object");
    }
    String type = p.path("rope_type").asText(p.path("type").asText("default"));
    Set<String> allowed = KEYS.get(type);
    if (allowed == null) {
      throw new ModelLoadException(file, where + " rope_type " + type + " is not supported"
          + " (default, linear, dynamic, llama3, yarn, longrope)");
    }
    for (Iterator<String> it = p.fieldNames(); it.hasNext(); ) {
      String key = it.next();
      if (!COMMON.contains(key) && !allowed.contains(key)) {
        throw new ModelLoadException(file, where + " key " + key + " " + p.get(key)
            + " is not a " + type + " rope parameter (" + String.join(", ", allowed) + ")");
      }
    }
    double theta = p.hasNonNull("rope_theta") ? positive(p, file, "rope_theta", where) : topTheta;
    double partial = p.hasNonNull("partial_rotary_factor")
        ? positive(p, file, "partial_rotary_factor", where)
        : c.hasNonNull("partial_rotary_factor") ? positive(c, file, "partial_rotary_factor", "")
        : 1.0;
    int maxPositions = c.path("max_position_embeddings").asInt();
    int original = c.hasNonNull("original_max_position_embeddings")
        ? (int) positive(c, file, "original_max_position_embeddings", "")
        : p.hasNonNull("original_max_position_embeddings")
        ? (int) positive(p, file, "original_max_position_embeddings", where) : maxPositions;
    return switch (type) {
      case "default" -> new Rope(type, theta, 1, 0, 0, 0, 1, 32, 1, true, List.of(), List.of(),
          partial);
      case "linear", "dynamic" -> new Rope(type, theta, positive(p, file, "factor", where), 0, 0,
          0, 1, 32, 1, true, List.of(), List.of(), partial);
      case "llama3" -> new Rope(type, theta, positive(p, file, "factor", where),
          positive(p, file, "low_freq_factor", where),
          positive(p, file, "high_freq_factor", where), original, 1, 32, 1, true, List.of(),
          List.of(), partial);
      case "yarn" -> yarn(p, file, where, theta, original, maxPositions, partial);
      default -> longrope(p, file, where, theta, original, maxPositions, partial, headDim);
    };
  }

  /** transformers' {@code _compute_yarn_parameters}, its defaults and attention factor. */
  private static Rope yarn(JsonNode p, Path file, String where, double theta, int original,
      int maxPositions, double partial) {
    double factor = p.hasNonNull("factor") ? positive(p, file, "factor", where)
        : (double) maxPositions / original;
    double attention;
    if (p.hasNonNull("attention_factor")) {
      attention = positive(p, file, "attention_factor", where);
    } else {
      double mscale = p.path("mscale").asDouble(0);
      double mscaleAllDim = p.path("mscale_all_dim").asDouble(0);
      attention = mscale != 0 && mscaleAllDim != 0
          ? yarnMscale(factor, mscale) / yarnMscale(factor, mscaleAllDim)
          : yarnMscale(factor, 1);
    }
    // transformers: `get("beta_fast") or 32`, so 0 also means the default
    double betaFast = p.path("beta_fast").asDouble(0) == 0 ? 32 : p.get("beta_fast").asDouble();
    double betaSlow = p.path("beta_slow").asDouble(0) == 0 ? 1 : p.get("beta_slow").asDouble();
    JsonNode truncate = p.get("truncate");
    if (truncate != null && !truncate.isNull() && !truncate.isBoolean()) {
      throw new ModelLoadException(file, where + " truncate " + truncate + " is not a boolean");
    }
    return new Rope("yarn", theta, factor, 0, 0, original, attention, betaFast, betaSlow,
        truncate == null || truncate.isNull() || truncate.asBoolean(), List.of(), List.of(),
        partial);
  }

  private static double yarnMscale(double scale, double mscale) {
    return scale <= 1 ? 1.0 : 0.1 * mscale * Math.log(scale) + 1.0;
  }

  /** transformers' {@code _compute_longrope_parameters}: both factor lists, one attention factor. */
  private static Rope longrope(JsonNode p, Path file, String where, double theta, int original,
      int maxPositions, double partial, int headDim) {
    double factor = p.hasNonNull("factor") ? positive(p, file, "factor", where)
        : (double) maxPositions / original;
    double attention = p.hasNonNull("attention_factor")
        ? positive(p, file, "attention_factor", where)
        : factor <= 1 ? 1.0 : Math.sqrt(1 + Math.log(factor) / Math.log(original));
    int half = (int) (headDim * partial) / 2;
    String size = "head_dim " + headDim + " x partial_rotary_factor " + partial + " / 2";
    List<Double> shortFactor = factors(p, file, where, "short_factor", half, size);
    List<Double> longFactor = factors(p, file, where, "long_factor", half, size);
    return new Rope("longrope", theta, factor, 0, 0, original, attention, 32, 1, true,
        shortFactor, longFactor, partial);
  }

  private static List<Double> factors(JsonNode p, Path file, String where, String key, int n,
      String size) {
    JsonNode v = p.get(key);
    if (v == null || !v.isArray() || v.size() != n) {
      throw new ModelLoadException(file, where + " " + key + " " + v + " is not a list of " + n
          + " numbers (" + size + ")");
    }
    List<Double> out = new ArrayList<>();
    for (JsonNode x : v) {
      if (!x.isNumber() || x.asDouble() <= 0) {
        throw new ModelLoadException(file, where + " " + key + " holds " + x
            + ", not a positive number");
      }
      out.add(x.asDouble());
    }
    return out;
  }

  private static double positive(JsonNode p, Path file, String key, String where) {
    JsonNode v = p.get(key);
    if (v == null || !v.isNumber() || !(v.asDouble() > 0)) {
      throw new ModelLoadException(file, (where.isEmpty() ? "" : where + " ") + key + " " + v
          + " is not a positive number");
    }
    return v.asDouble();
  }
}
