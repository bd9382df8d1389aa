package dev.radixserve.model.gguf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.radixserve.model.chat.ChatTemplate;
import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A file's {@code tokenizer.chat_template.tool_use} (the converter's copy of a checkpoint's
 * template named tool_use: gguf-py's {@code CHAT_TEMPLATE_N}) renders the requests that pass
 * tools, as llama-server and transformers pick it; the default one the others. Checked on the
 * Llama 3 fixture with Hermes 3's tool_use template and a ChatML default beside it, against
 * transformers' renders of the same pair ({@code chat-templates/expected.json}'s named cases).
 */
class GgufToolUseTemplateTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Clock FIXTURE_DAY =
      Clock.fixed(Instant.parse("2026-11-24T12:00:00Z"), ZoneOffset.UTC);

  @Test
  void theKeyIsGgufPysNamedTemplate() throws IOException {
    List<String> keys = new ArrayList<>();
    GgufTablesTest.tables().get("keys").forEach(k -> keys.add(k.asText()));
    assertTrue(keys.contains("tokenizer.chat_template.{name}"), keys.toString());
    assertEquals("tokenizer.chat_template.{name}".replace("{name}", "tool_use"),
        GgufKeys.CHAT_TEMPLATE_TOOL_USE);
  }

  @Test
  void requestsWithToolsRenderByTheToolUseTemplate(@TempDir Path dir) throws IOException {
    String defaultTemplate = text("chatml_default.jinja");
    String toolUse = text("hermes3_tool_use.jinja");
    Path file = GgufTestFiles.rewrite("llama3-f32.gguf", dir.resolve("tool-use.gguf"), kv -> {
      kv.put(GgufKeys.CHAT_TEMPLATE, defaultTemplate);
      kv.put(GgufKeys.CHAT_TEMPLATE_TOOL_USE, toolUse);
    }, tensors -> {});
    int checked = 0;
    try (Arena arena = Arena.ofConfined()) {
      ChatTemplate t = GgufModelLoader.chatTemplate(GgufFile.map(file, arena), FIXTURE_DAY);
      assertTrue(t.takesTools());
      for (JsonNode c : JSON.readTree(text("expected.json"))) {
        if (!c.has("named")) {
          continue;
        }
        List<ChatTemplate.Message> messages = new ArrayList<>();
        for (JsonNode m : c.get("messages")) {
          messages.add(message(m));
        }
        List<Map<String, Object>> tools = c.has("tools") ? JSON.convertValue(c.get("tools"),
            new TypeReference<List<Map<String, Object>>>() {}) : null;
        assertEquals(c.get("rendered").asText(), t.render(messages, tools, Map.of()));
        checked++;
      }
    }
    assertEquals(11, checked);
  }

  @Test
  void withoutTheKeyTheDefaultTemplateAloneRenders(@TempDir Path dir) throws IOException {
    String defaultTemplate = text("chatml_default.jinja");
    Path file = GgufTestFiles.rewrite("llama3-f32.gguf", dir.resolve("default.gguf"),
        kv -> kv.put(GgufKeys.CHAT_TEMPLATE, defaultTemplate), tensors -> {});
    try (Arena arena = Arena.ofConfined()) {
      assertFalse(GgufModelLoader.chatTemplate(GgufFile.map(file, arena), FIXTURE_DAY)
          .takesTools());
    }
  }

  private static ChatTemplate.Message message(JsonNode m) {
    JsonNode content = m.get("content");
    List<Map<String, Object>> calls = m.has("tool_calls") ? JSON.convertValue(m.get("tool_calls"),
        new TypeReference<List<Map<String, Object>>>() {}) : null;
    return new ChatTemplate.Message(m.get("role").asText(),
        content == null || content.isNull() ? null : content.asText(), calls,
        m.path("tool_call_id").asText(null), m.path("name").asText(null),
        m.path("reasoning_content").asText(null));
  }

  private static String text(String resource) throws IOException {
    try (InputStream in = GgufToolUseTemplateTest.class.getResourceAsStream("/chat-templates/"
        + resource)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }
}
