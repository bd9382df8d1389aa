package dev.radixserve.model.chat;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** The cases of {@code chat-templates/expected.json} (transformers' renders) as tests read them. */
public final class ChatFixtures {

  /** The date the fixtures pinned strftime_now to. */
  public static final java.time.Clock FIXTURE_DAY = JinjaChatTemplateTest.FIXTURE_DAY;
  private static final ObjectMapper JSON = new ObjectMapper();

  private ChatFixtures() {}

  /** The cases rendered by a default template beside one named tool_use ("named": true). */
  public static List<JsonNode> namedCases() throws IOException {
    List<JsonNode> named = new ArrayList<>();
    for (JsonNode c : JSON.readTree(JinjaChatTemplateTest.resource("expected.json"))) {
      if (c.has("named")) {
        named.add(c);
      }
    }
    return named;
  }

  /** A fixture message (OpenAI's shape) as the server hands it over. */
  static ChatTemplate.Message message(JsonNode m) {
    JsonNode content = m.get("content");
    List<Map<String, Object>> calls = m.has("tool_calls") ? JSON.convertValue(m.get("tool_calls"),
        new TypeReference<List<Map<String, Object>>>() {}) : null;
    return new ChatTemplate.Message(m.get("role").asText(),
        content == null || content.isNull() ? null : content.asText(), calls,
        m.path("tool_call_id").asText(null), m.path("name").asText(null),
        m.path("reasoning_content").asText(null));
  }

  static List<ChatTemplate.Message> messages(JsonNode c) {
    List<ChatTemplate.Message> messages = new ArrayList<>();
    for (JsonNode m : c.get("messages")) {
      messages.add(message(m));
    }
    return messages;
  }

  static List<Map<String, Object>> tools(JsonNode c) {
    return c.has("tools") ? JSON.convertValue(c.get("tools"),
        new TypeReference<List<Map<String, Object>>>() {}) : null;
  }

  /** {@code template} renders case {@code c} (no extra variables) as transformers did. */
  public static void assertRendersAsTransformers(ChatTemplate template, JsonNode c) {
    assertEquals(c.get("rendered").asText(), template.render(messages(c), tools(c), Map.of()));
  }
}
