package dev.radixserve.model.weights;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.radixserve.model.ModelConfig;
import dev.radixserve.model.tokenizer.TokenizerLoader;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * Loads a GPT-2 model directory in Hugging Face layout: {@code config.json}, {@code
 * model.safetensors} (memory-mapped, F32/F16/BF16, names with or without {@code transformer.},
 * lm_head tied to wte) and the tokenizer files ({@link TokenizerLoader#load}). Every problem is a
 * {@link ModelLoadException} naming the file.
 */
public final class HfModelLoader {

  public static final String CONFIG_JSON = "config.json";
  public static final String SAFETENSORS = "model.safetensors";
  static final String PREFIX = "transformer.";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Set<String> ACTIVATIONS = Set.of("gelu_new", "gelu");

  private HfModelLoader() {}

  /** Weights and tokenizer of the directory; close the result to unmap the weights. */
  public static LoadedModel load(Path dir) {
    GptWeights weights = loadWeights(dir);
    try {
      return new LoadedModel(weights, TokenizerLoader.load(dir));
    } catch (RuntimeException e) {
      weights.close();
      throw e;
    }
  }

  public static ModelConfig loadConfig(Path dir) {
    Path file = dir.resolve(CONFIG_JSON);
    if (!Files.isRegularFile(file)) {
      throw new ModelLoadException(file, "file is missing");
    }
    JsonNode c;
    try {
      c = JSON.readTree(file.toFile());
    } catch (JacksonException e) {
      throw new ModelLoadException(file, "is not valid JSON: " + e.getOriginalMessage(), e);
    } catch (IOException e) {
      throw new ModelLoadException(file, "cannot be read: " + e, e);
    }
    String modelType = c.path("model_type").asText("");
    JsonNode architectures = c.path("architectures");
    String architecture = architectures.isArray() && !architectures.isEmpty() ? architectures.get(0).asText() : "";
    if (!modelType.equals("gpt2") || !(architecture.isEmpty() || architecture.startsWith("GPT2"))) {
      String named = modelType.equals("gpt2") ? architecture : (modelType.isEmpty() ? "(none)" : modelType);
      throw new ModelLoadException(file, "unknown architecture " + named + " in config.json (need gpt2)");
    }
    String activation = c.path("activation_function").asText("gelu_new");
    if (!ACTIVATIONS.contains(activation)) {
      throw new ModelLoadException(file, "activation_function " + activation + " is not supported (gelu_new or gelu)");
    }
    try {
      return new ModelConfig(
          intField(c, file, "n_layer"),
          intField(c, file, "n_head"),
          intField(c, file, "n_embd"),
          c.has("n_positions") ? intField(c, file, "n_positions") : intField(c, file, "n_ctx"),
          intField(c, file, "vocab_size"),
          c.path("layer_norm_epsilon").asDouble(1e-5),
          activation);
    } catch (IllegalArgumentException e) {
      throw new ModelLoadException(file, e.getMessage(), e);
    }
  }

  /** The weights alone, memory-mapped. */
  public static GptWeights loadWeights(Path dir) {
    ModelConfig config = loadConfig(dir);
    Path file = dir.resolve(SAFETENSORS);
    if (!Files.isRegularFile(file)) {
      throw new ModelLoadException(file, "file is missing");
    }
    Arena arena = Arena.ofShared();
    try {
      Map<String, Tensor> canonical = new LinkedHashMap<>();
      Tensor lmHead = null;
      for (Tensor t : SafetensorsFile.map(file, arena).values()) {
        String name = t.name().startsWith(PREFIX) ? t.name().substring(PREFIX.length()) : t.name();
        if (name.endsWith(".attn.bias") || name.endsWith(".attn.masked_bias")) {
          continue; // causal-mask buffers, not weights
        }
        if (name.equals("lm_head.weight")) {
          lmHead = t;
          continue;
        }
        if (canonical.put(name, new Tensor(name, t.dtype(), t.shape(), t.data())) != null) {
          throw new ModelLoadException(file, "tensor " + name + " appears both with and without the prefix");
        }
      }
      if (lmHead != null) {
        checkTied(file, lmHead, canonical.get("wte.weight"));
      }
      return new GptWeights(config, canonical, arena);
    } catch (IllegalArgumentException e) {
      arena.close();
      throw new ModelLoadException(file, e.getMessage(), e);
    } catch (RuntimeException e) {
      arena.close();
      throw e;
    }
  }

  private static void checkTied(Path file, Tensor lmHead, Tensor wte) {
    boolean same = wte != null && wte.dtype() == lmHead.dtype()
        && java.util.Arrays.equals(wte.shape(), lmHead.shape())
        && wte.data().mismatch(lmHead.data()) < 0;
    if (!same) {
      throw new ModelLoadException(file, "lm_head.weight differs from wte.weight: untied lm_head is not supported");
    }
  }

  private static int intField(JsonNode c, Path file, String name) {
    JsonNode v = c.get(name);
    if (v == null || !v.canConvertToInt()) {
      throw new ModelLoadException(file, "field " + name + " is missing or not an integer");
    }
    return v.asInt();
  }
}
