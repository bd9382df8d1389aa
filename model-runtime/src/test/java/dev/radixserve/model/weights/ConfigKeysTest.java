package dev.radixserve.model.weights;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.radixserve.model.LlamaConfig;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The config-key tables against transformers' own config classes ({@code keys.json}, written by
 * {@code transformers-checkpoints/make_fixtures.py} from the pinned transformers), and each
 * table's claims against the reader: an inert key changes nothing that is read, and a read key,
 * changed, changes the config read or refuses the load.
 */
class ConfigKeysTest {

  static final ObjectMapper JSON = new ObjectMapper();
  /** Keys transformers 5 reads that its config classes no longer write (the 4.x forms). */
  static final Set<String> LEGACY = Set.of("rope_theta", "rope_scaling", "torch_dtype",
      "partial_rotary_factor", "original_max_position_embeddings", "n_ctx",
      "rope_local_base_freq", "sliding_window_pattern"); // the last two: Gemma 3's

  static Path fixtures() throws URISyntaxException {
    return Path.of(ConfigKeysTest.class.getResource("/transformers-checkpoints").toURI());
  }

  static Map<String, ConfigKeys> tables() {
    Map<String, ConfigKeys> all = new java.util.HashMap<>(LlamaConfigReader.KEYS);
    all.put("gpt2", HfConfig.GPT2_KEYS);
    all.putAll(GemmaConfigReader.KEYS);
    return all;
  }

  @Test
  void everyKeyOfTransformersConfigClassesIsClassified() throws Exception {
    JsonNode keys = JSON.readTree(fixtures().resolve("keys.json").toFile());
    Set<String> base = new TreeSet<>();
    keys.get("PreTrainedConfig").forEach(k -> base.add(k.asText()));
    for (Map.Entry<String, ConfigKeys> e : tables().entrySet()) {
      Set<String> want = new TreeSet<>(base);
      keys.get("model_types").get(e.getKey()).forEach(k -> want.add(k.asText()));
      Set<String> have = new TreeSet<>(e.getValue().keys());
      Set<String> missing = new TreeSet<>(want);
      missing.removeAll(have);
      assertEquals(Set.of(), missing, e.getKey() + ": transformers keys the table lacks");
      Set<String> extra = new TreeSet<>(have);
      extra.removeAll(want);
      extra.removeAll(LEGACY);
      assertEquals(Set.of(), extra, e.getKey() + ": table keys transformers' class lacks");
      Set<String> both = new TreeSet<>(e.getValue().read());
      both.retainAll(e.getValue().inert().keySet());
      assertEquals(Set.of(), both, e.getKey() + ": keys both read and inert");
    }
  }

  /** Every transformers 5 fixture: each inert key changed reads the same config. */
  @Test
  void inertKeysChangeNothingRead() throws Exception {
    for (Path file : configs()) {
      ObjectNode c = (ObjectNode) JSON.readTree(file.toFile());
      LlamaConfig base = LlamaConfigReader.read(c, file);
      ConfigKeys table = LlamaConfigReader.KEYS.get(c.get("model_type").asText());
      for (String key : table.inert().keySet()) {
        ObjectNode changed = c.deepCopy();
        changed.set(key, other(c.get(key)));
        assertEquals(base, LlamaConfigReader.read(changed, file), file + ": inert " + key);
      }
    }
  }

  /**
   * Every transformers 5 fixture: each read key it holds, changed, changes the config or is
   * refused by a {@link ModelLoadException}; except where the fixture makes the key moot (a
   * window the config does not use).
   */
  @Test
  void readKeysChangeTheConfigOrRefuse() throws Exception {
    for (Path file : configs()) {
      ObjectNode c = (ObjectNode) JSON.readTree(file.toFile());
      LlamaConfig base = LlamaConfigReader.read(c, file);
      ConfigKeys table = LlamaConfigReader.KEYS.get(c.get("model_type").asText());
      for (String key : table.read()) {
        if (!c.has(key) || moot(c, key)) {
          continue;
        }
        ObjectNode changed = c.deepCopy();
        changed.set(key, other(c.get(key)));
        try {
          assertNotEquals(base, LlamaConfigReader.read(changed, file), file + ": read " + key
              + " " + c.get(key) + " -> " + changed.get(key) + " changed nothing");
        } catch (ModelLoadException refused) {
          // hidden_size / num_attention_heads make head_dim when the config has none
          boolean derived = Set.of("hidden_size", "num_attention_heads").contains(key)
              && refused.getMessage().contains("head_dim");
          assertTrue(refused.getMessage().contains(key) || derived
              || key.equals("rope_parameters") || key.equals("model_type")
              || key.equals("layer_types"),
              file + ": " + key + " refused without its name: " + refused.getMessage());
        }
      }
    }
  }

  /** Keys the fixture's other keys make moot, as transformers' models make them. */
  private static boolean moot(JsonNode c, String key) {
    boolean windowUsed = c.path("use_sliding_window").asBoolean(false)
        || c.path("model_type").asText().equals("mistral") && !c.path("sliding_window").isNull();
    return switch (key) {
      // qwen2/3: sliding_window counts only with use_sliding_window; max_window_layers only
      // without layer_types (transformers 5 writes them, derived)
      case "sliding_window" -> !windowUsed;
      case "max_window_layers" -> c.has("layer_types");
      case "layer_types" -> !windowUsed;
      case "use_sliding_window" -> c.path("sliding_window").isNull();
      // the pretraining length only counts for the rope types that scale from it
      case "original_max_position_embeddings" -> !Set.of("llama3", "yarn", "longrope")
          .contains(c.path("rope_parameters").path("rope_type").asText());
      // an architectures entry is checked, not kept; dtype is the stored precision
      case "architectures", "dtype", "transformers_version" -> true;
      // the tokenizer's EOS; read by HfConfig, not this record
      case "eos_token_id" -> true;
      default -> false;
    };
  }

  private static JsonNode other(JsonNode v) {
    if (v == null || v.isNull()) {
      return JSON.getNodeFactory().numberNode(3);
    }
    if (v.isBoolean()) {
      return JSON.getNodeFactory().booleanNode(!v.asBoolean());
    }
    if (v.isIntegralNumber()) {
      return JSON.getNodeFactory().numberNode(v.asInt() * 2 + 2);
    }
    if (v.isNumber()) {
      return JSON.getNodeFactory().numberNode(v.asDouble() * 3 + 0.5);
    }
    if (v.isObject()) {
      ObjectNode o = ((ObjectNode) v).deepCopy();
      o.put("rope_theta", 777.0);
      return o;
    }
    if (v.isArray()) {
      return JSON.getNodeFactory().arrayNode().add("sliding_attention");
    }
    return JSON.getNodeFactory().textNode(v.asText() + "_other");
  }

  private static java.util.List<Path> configs() throws Exception {
    try (Stream<Path> dirs = Files.list(fixtures())) {
      return dirs.map(d -> d.resolve("config.json")).filter(Files::isRegularFile)
          .filter(f -> !f.getParent().getFileName().toString().endsWith("-v4")).sorted().toList();
    }
  }
}
