package dev.radixserve.model.chat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
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
 * The families' chat templates (Llama 3.0, Llama 3.1/3.2/3.3, Qwen2.5, Qwen3, Mistral v0.1, Mistral
 * Nemo, Mistral Small 3.2, SmolLM2, Phi-3.5, Gemma 2, DeepSeek-R1 distills, Hermes 3's tool_use)
 * rendered by jinjava equal transformers' {@code apply_chat_template} byte for
 * byte, refusals included, with and without {@code tools}, assistant {@code tool_calls} and
 * {@code tool} messages. Fixtures and the script that made them: {@code src/test/resources/chat-templates}.
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
      if (c.has("named")) {
        continue; // toolUseTemplateIsPickedAsTransformersPicks
      }
      String name = c.get("template").asText();
      tests.add(DynamicTest.dynamicTest(name + " #" + (i++) + (c.has("kwargs") ? " "
          + c.get("kwargs") : ""), () -> {
        JinjaChatTemplate t = templates.computeIfAbsent(name, n -> {
          try {
            return new JinjaChatTemplate(resource(n + ".jinja"), c.get("bos_token").asText(null),
                c.get("eos_token").asText(null), FIXTURE_DAY);
          } catch (IOException e) {
            throw new IllegalStateException(e);
          }
        });
        List<ChatTemplate.Message> messages = ChatFixtures.messages(c);
        List<Map<String, Object>> tools = ChatFixtures.tools(c);
        Map<String, Object> kwargs = c.has("kwargs") ? JSON.convertValue(c.get("kwargs"),
            new TypeReference<Map<String, Object>>() {}) : Map.of();
        if (c.has("rendered")) {
          assertEquals(c.get("rendered").asText(), t.render(messages, tools, kwargs));
        } else {
          ChatTemplateException e = assertThrows(ChatTemplateException.class,
              () -> t.render(messages, tools));
          assertEquals("the model's chat template refused the messages: " + c.get("error").asText(),
              e.getMessage());
        }
      }));
    }
    return tests;
  }

  /**
   * A default template beside one named tool_use, in both forms transformers saves them
   * (chat_template.jinja + additional_chat_templates/tool_use.jinja; the tokenizer_config.json
   * list): requests with tools, even an empty list, render by tool_use, the others by default,
   * each as transformers' apply_chat_template renders them.
   */
  @TestFactory
  List<DynamicTest> toolUseTemplateIsPickedAsTransformersPicks() throws IOException,
      URISyntaxException {
    Path fixtures = Path.of(JinjaChatTemplateTest.class.getResource("/chat-templates").toURI());
    List<DynamicTest> tests = new ArrayList<>();
    for (String form : List.of("named-files", "named-config")) {
      ChatTemplate t = ChatTemplates.load(fixtures.resolve(form), FIXTURE_DAY).orElseThrow();
      assertTrue(t.takesTools(), form);
      int i = 0;
      for (JsonNode c : ChatFixtures.namedCases()) {
        tests.add(DynamicTest.dynamicTest(form + " #" + (i++) + (c.has("tools") ? " tools "
            + c.get("tools").size() : ""), () -> ChatFixtures.assertRendersAsTransformers(t, c)));
      }
    }
    assertEquals(2 * 11, tests.size());
    return tests;
  }

  @Test
  void onlyTemplatesThatReadToolsTakeThem() throws IOException {
    for (String name : List.of("llama3_2", "qwen2_5", "qwen3", "mistral_nemo")) {
      assertTrue(new JinjaChatTemplate(resource(name + ".jinja"), null, null, FIXTURE_DAY)
          .takesTools(), name);
    }
    for (String name : List.of("llama3", "mistral", "smollm2")) {
      assertFalse(new JinjaChatTemplate(resource(name + ".jinja"), null, null, FIXTURE_DAY)
          .takesTools(), name);
    }
    assertFalse(new ChatMlTemplate().takesTools());
  }

  @Test
  void tojsonIsPythonsJsonDumps() throws IOException {
    Object v = JSON.readValue("{\"a\": [1, 2.5, null, true], \"b\": \"\\\"é\\n\\u0001\"}", Object.class);
    assertEquals("{\"a\": [1, 2.5, null, true], \"b\": \"\\\"é\\n\\u0001\"}", PythonJson.dumps(v, -1));
    Object nested = JSON.readValue("{\"x\": {}, \"y\": [1]}", Object.class);
    assertEquals("{\n  \"x\": {},\n  \"y\": [\n    1\n  ]\n}", PythonJson.dumps(nested, 2));
    assertEquals("1e-05", PythonJson.floatRepr(0.00001));
    assertEquals("1e+16", PythonJson.floatRepr(1e16));
    assertEquals("1234567890123456.0", PythonJson.floatRepr(1234567890123456.0));
    assertEquals("0.0001", PythonJson.floatRepr(0.0001));
    assertEquals("-2.0", PythonJson.floatRepr(-2));
  }

  @Test
  void pythonStringMethodsKeepPythonSemantics() {
    assertEquals(List.of("a", ""), PythonStrings.split("a</think>", "</think>"));
    assertEquals(List.of("a", "b"), PythonStrings.split("  a \n b ", null));
    assertEquals("x\n", PythonStrings.lstrip("\n\nx\n", "\n"));
    assertEquals("\nx", PythonStrings.rstrip("\nx\n\n", "\n"));
  }
}
