package dev.radixserve.model.chat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * The families' chat templates (Llama 3.0, Llama 3.1/3.2, Qwen2.5, Qwen3, Mistral, SmolLM2)
 * rendered by jinjava equal transformers' {@code apply_chat_template} byte for byte, refusals
 * included. Fixtures and the script that made them: {@code src/test/resources/chat-templates}.
 */
class JinjaChatTemplateTest {

  /** The date the fixtures pinned strftime_now to. */
  static final Clock FIXTURE_DAY = Clock.fixed(Instant.parse("2026-11-24T12:00:00Z"), ZoneOffset.UTC);
  private static final ObjectMapper JSON = new ObjectMapper();

  static String resource(String name) throws IOException {
    try (InputStream in = JinjaChatTemplateTest.class.getResourceAsStream("/chat-templates/" + name)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  @TestFactory
  List<DynamicTest> rendersAsTransformersDoes() throws IOException {
    JsonNode cases = JSON.readTree(resource("expected.json"));
    Map<String, JinjaChatTemplate> templates = new ConcurrentHashMap<>();
    List<DynamicTest> tests = new ArrayList<>();
    int i = 0;
    for (JsonNode c : cases) {
      String name = c.get("template").asText();
      tests.add(DynamicTest.dynamicTest(name + " #" + (i++), () -> {
        JinjaChatTemplate t = templates.computeIfAbsent(name, n -> {
          try {
            return new JinjaChatTemplate(resource(n + ".jinja"), c.get("bos_token").asText(null),
                c.get("eos_token").asText(null), FIXTURE_DAY);
          } catch (IOException e) {
            throw new IllegalStateException(e);
          }
        });
        List<ChatTemplate.Message> messages = new ArrayList<>();
        for (JsonNode m : c.get("messages")) {
          messages.add(new ChatTemplate.Message(m.get("role").asText(), m.get("content").asText()));
        }
        if (c.has("rendered")) {
          assertEquals(c.get("rendered").asText(), t.render(messages));
        } else {
          ChatTemplateException e = assertThrows(ChatTemplateException.class, () -> t.render(messages));
          assertEquals("the model's chat template refused the messages: " + c.get("error").asText(),
              e.getMessage());
        }
      }));
    }
    return tests;
  }

  @Test
  void pythonStringMethodsKeepPythonSemantics() {
    assertEquals(List.of("a", ""), PythonStrings.split("a</think>", "</think>"));
    assertEquals(List.of("a", "b"), PythonStrings.split("  a \n b ", null));
    assertEquals("x\n", PythonStrings.lstrip("\n\nx\n", "\n"));
    assertEquals("\nx", PythonStrings.rstrip("\nx\n\n", "\n"));
  }
}
