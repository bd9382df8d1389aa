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
 * {@code eos_token} texts. A template named {@code tool_use} beside the default ({@code
 * additional_chat_templates/tool_use.jinja}, as transformers 5 saves it, or in the config's
 * list) renders the requests that pass tools ({@link ToolUseChatTemplate}).
 */
public final class ChatTemplates {

  public static final String JINJA_FILE = "chat_template.jinja";
  /** Where transformers 5 saves the templates other than the default, as NAME.jinja. */
  static final String TEMPLATE_DIR = "additional_chat_templates";
  static final String DEFAULT = "default";
  static final String TOOL_USE = "tool_use";

  private ChatTemplates() {}

  /** The model's template; empty when it has none (GPT-2). */
  public static Optional<ChatTemplate> load(Path dir, Clock clock) {
    Path configFile = dir.resolve(TokenizerLoader.TOKENIZER_CONFIG_JSON);
    JsonNode config = Files.isRegularFile(configFile)
        ? JsonFile.readObject(configFile) : JsonFile.emptyObject();
    boolean files = Files.isRegularFile(dir.resolve(JINJA_FILE));
    Optional<String> source = files ? jinjaFile(dir.resolve(JINJA_FILE))
        : fromConfig(config, configFile, DEFAULT);
    // transformers reads the named templates of the form the default came in
    Optional<String> toolUse = files
        ? jinjaFile(dir.resolve(TEMPLATE_DIR).resolve(TOOL_USE + ".jinja"))
        : fromConfig(config, configFile, TOOL_USE);
    String bos = tokenText(config, "bos_token");
    String eos = tokenText(config, "eos_token");
    return source.map(s -> withToolUse(new JinjaChatTemplate(s, bos, eos, clock),
        toolUse.map(t -> new JinjaChatTemplate(t, bos, eos, clock))));
  }

  /** {@code defaultTemplate}, or it beside a {@code tool_use} template when there is one. */
  public static ChatTemplate withToolUse(ChatTemplate defaultTemplate,
      Optional<? extends ChatTemplate> toolUse) {
    return toolUse.<ChatTemplate>map(t -> new ToolUseChatTemplate(defaultTemplate, t))
        .orElse(defaultTemplate);
  }

  private static Optional<String> jinjaFile(Path file) {
    if (!Files.isRegularFile(file)) {
      return Optional.empty();
    }
    try {
      return Optional.of(Files.readString(file));
    } catch (IOException e) {
      throw new ModelLoadException(file, "cannot be read: " + e, e);
    }
  }

  /** The config's template of that name ({@code default}: a plain string one too). */
  private static Optional<String> fromConfig(JsonNode config, Path file, String name) {
    JsonNode t = config.get("chat_template");
    if (t == null || t.isNull()) {
      return Optional.empty();
    }
    if (t.isTextual()) {
      return name.equals(DEFAULT) ? Optional.of(t.asText()) : Optional.empty();
    }
    if (t.isArray()) {
      for (JsonNode named : t) {
        if (named.path("name").asText().equals(name) && named.path("template").isTextual()) {
          return Optional.of(named.get("template").asText());
        }
      }
      if (!name.equals(DEFAULT)) {
        return Optional.empty();
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
