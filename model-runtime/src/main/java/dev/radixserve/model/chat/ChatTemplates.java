package dev.radixserve.model.chat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.radixserve.model.tokenizer.TokenizerLoader;
import dev.radixserve.model.weights.JsonFile;
import dev.radixserve.model.weights.ModelLoadException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Optional;

/**
 * Finds a model directory's chat template as transformers does: {@code chat_template.jinja}, else
 * {@code tokenizer_config.json}'s {@code chat_template} (a string, or a list of named templates
 * whose {@code default} is the chat template), with the config's {@code bos_token} and
 * {@code eos_token} texts.
 */
public final class ChatTemplates {

  public static final String JINJA_FILE = "chat_template.jinja";

  private ChatTemplates() {}

  /** The model's template; empty when it has none (GPT-2). */
  public static Optional<ChatTemplate> load(Path dir, Clock clock) {
    Path configFile = dir.resolve(TokenizerLoader.TOKENIZER_CONFIG_JSON);
    JsonNode config = Files.isRegularFile(configFile)
        ? JsonFile.readObject(configFile) : JsonFile.emptyObject();
    Optional<String> source = jinjaFile(dir).or(() -> fromConfig(config, configFile));
    return source.map(s -> new JinjaChatTemplate(s, tokenText(config, "bos_token"),
        tokenText(config, "eos_token"), clock));
  }

  private static Optional<String> jinjaFile(Path dir) {
    Path file = dir.resolve(JINJA_FILE);
    if (!Files.isRegularFile(file)) {
      return Optional.empty();
    }
    try {
      return Optional.of(Files.readString(file));
    } catch (IOException e) {
      throw new ModelLoadException(file, "cannot be read: " + e, e);
    }
  }

  private static Optional<String> fromConfig(JsonNode config, Path file) {
    JsonNode t = config.get("chat_template");
    if (t == null || t.isNull()) {
      return Optional.empty();
    }
    if (t.isTextual()) {
      return Optional.of(t.asText());
    }
    if (t.isArray()) {
      for (JsonNode named : t) {
        if (named.path("name").asText().equals("default") && named.path("template").isTextual()) {
          return Optional.of(named.get("template").asText());
        }
      }
    }
    throw new ModelLoadException(file, "chat_template is neither a string nor a list with a"
        + " template named default");
  }

  /** {@code "<s>"} or {@code {"content": "<s>", ...}}; null when absent (as transformers passes None). */
  private static String tokenText(JsonNode config, String key) {
    JsonNode v = config.path(key);
    return v.isTextual() ? v.asText() : v.path("content").isTextual() ? v.get("content").asText() : null;
  }
}
