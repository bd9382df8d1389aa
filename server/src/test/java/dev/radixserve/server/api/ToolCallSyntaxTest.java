package dev.radixserve.server.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.model.chat.ChatMlTemplate;
import dev.radixserve.model.chat.JinjaChatTemplate;
import dev.radixserve.server.config.ToolCallParserSetting;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Each family's tool-call syntax read from whole replies, as vLLM's parsers read them. */
class ToolCallSyntaxTest {

  private static final Set<String> NAMES = Set.of("get_weather", "now");

  private static ToolCallSyntax.Call call(String name, String args) {
    return new ToolCallSyntax.Call(name, args);
  }

  private static JinjaChatTemplate template(String name) throws IOException {
    try (InputStream in = ToolCallSyntaxTest.class.getResourceAsStream("/chat-templates/" + name
        + ".jinja")) {
      return new JinjaChatTemplate(new String(in.readAllBytes(), StandardCharsets.UTF_8), null,
          null, Clock.systemUTC());
    }
  }

  @Test
  void autoPicksTheSyntaxFromTheTemplate() throws IOException {
    ToolCallParserSetting auto = ToolCallParserSetting.AUTO;
    assertEquals(ToolCallSyntax.HERMES, ToolCallSyntax.of(auto, template("qwen2_5")));
    assertEquals(ToolCallSyntax.HERMES, ToolCallSyntax.of(auto, template("qwen3")));
    assertEquals(ToolCallSyntax.LLAMA3_JSON, ToolCallSyntax.of(auto, template("llama3_2")));
    assertEquals(ToolCallSyntax.MISTRAL, ToolCallSyntax.of(auto, template("mistral_nemo")));
    for (String none : List.of("llama3", "mistral", "smollm2")) {
      assertEquals(ToolCallSyntax.GENERIC, ToolCallSyntax.of(auto, template(none)), none);
    }
    assertEquals(ToolCallSyntax.GENERIC, ToolCallSyntax.of(auto, new ChatMlTemplate()));
    assertEquals(ToolCallSyntax.MISTRAL,
        ToolCallSyntax.of(ToolCallParserSetting.MISTRAL, template("qwen3")));
  }

  @Test
  void hermesReadsOneOrSeveralCallsAfterContent() {
    ToolCallSyntax h = ToolCallSyntax.HERMES;
    assertEquals(new ToolCallSyntax.Parsed("", List.of(call("get_weather", "{\"city\":\"Oslo\"}"))),
        h.parse("<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}\n"
            + "</tool_call>", NAMES));
    assertEquals(new ToolCallSyntax.Parsed("Let me look.\n", List.of(
            call("get_weather", "{\"city\":\"Oslo\"}"), call("now", "{}"))),
        h.parse("Let me look.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\":"
            + " \"Oslo\"}}\n</tool_call>\n<tool_call>{\"name\":\"now\",\"arguments\":{}}</tool_call>\n",
            NAMES));
    // an unclosed last call still counts (the model stopped at its end token)
    assertEquals(List.of(call("now", "{}")),
        h.parse("<tool_call>\n{\"name\": \"now\", \"arguments\": {}}", NAMES).calls());
    // malformed: no JSON, unknown function, arguments not an object, extra key, text after
    assertNull(h.parse("<tool_call>\n{\"name\": \"now\", \"arguments\": {}\n</tool_call>", NAMES));
    assertNull(h.parse("<tool_call>\n{\"name\": \"rm\", \"arguments\": {}}\n</tool_call>", NAMES));
    assertNull(h.parse("<tool_call>{\"name\": \"now\", \"arguments\": \"{}\"}</tool_call>", NAMES));
    assertNull(h.parse("<tool_call>{\"name\": \"now\", \"arguments\": {}, \"x\": 1}</tool_call>", NAMES));
    assertNull(h.parse("<tool_call>{\"name\": \"now\", \"arguments\": {}}</tool_call> and more", NAMES));
    assertNull(h.parse("no call here {\"name\": \"now\", \"arguments\": {}}", NAMES));
  }

  @Test
  void llamaReadsJsonWithParametersOptionallyAfterThePythonTag() {
    ToolCallSyntax l = ToolCallSyntax.LLAMA3_JSON;
    assertEquals(new ToolCallSyntax.Parsed("", List.of(call("get_weather", "{\"city\":\"Oslo\"}"))),
        l.parse(" {\"name\": \"get_weather\", \"parameters\": {\"city\": \"Oslo\"}}", NAMES));
    assertEquals(new ToolCallSyntax.Parsed("", List.of(call("now", "{}"),
            call("get_weather", "{\"city\":\"Oslo\"}"))),
        l.parse("<|python_tag|>{\"name\": \"now\", \"parameters\": {}}; {\"name\": \"get_weather\","
            + " \"arguments\": {\"city\": \"Oslo\"}}", NAMES));
    assertEquals("Sure. ", l.parse("Sure. <|python_tag|>{\"name\": \"now\", \"parameters\": {}}",
        NAMES).content());
    assertNull(l.parse("Sure. {\"name\": \"now\", \"parameters\": {}}", NAMES));
    assertNull(l.parse("{\"name\": \"now\", \"parameters\": {}} {\"name\": \"now\", \"parameters\": {}}",
        NAMES));
    assertNull(l.parse("{\"name\": \"now\", \"parameters\": {}", NAMES));
    assertNull(l.parse("{\"name\": \"now\"}", NAMES));
  }

  @Test
  void mistralReadsTheArrayAfterToolCalls() {
    ToolCallSyntax m = ToolCallSyntax.MISTRAL;
    assertEquals(new ToolCallSyntax.Parsed("", List.of(call("now", "{}"),
            call("get_weather", "{\"city\":\"Oslo\"}"))),
        m.parse("[TOOL_CALLS][{\"name\": \"now\", \"arguments\": {}}, {\"name\": \"get_weather\","
            + " \"arguments\": {\"city\": \"Oslo\"}}]", NAMES));
    assertEquals("Checking. ", m.parse("Checking. [TOOL_CALLS] {\"name\": \"now\", \"arguments\": {}}",
        NAMES).content());
    assertNull(m.parse("[TOOL_CALLS][{\"name\": \"now\", \"arguments\": {}}", NAMES));
    assertNull(m.parse("[TOOL_CALLS][{\"name\": \"now\", \"arguments\": {}}] trailing", NAMES));
    assertNull(m.parse("[{\"name\": \"now\", \"arguments\": {}}]", NAMES));
    assertTrue(m.newId().matches("[A-Za-z0-9]{9}"));
    assertTrue(ToolCallSyntax.HERMES.newId().matches("call_[A-Za-z0-9]{24}"));
  }

  @Test
  void genericIsOneObjectForTheWholeReply() {
    ToolCallSyntax g = ToolCallSyntax.GENERIC;
    assertEquals(List.of(call("now", "{}")),
        g.parse("\n{\"name\": \"now\", \"arguments\": {}}\n", NAMES).calls());
    assertNull(g.parse("{\"name\": \"now\", \"arguments\": {}}\n{\"name\": \"now\", \"arguments\": {}}",
        NAMES));
    assertNull(g.parse("{\"name\": \"now\", \"parameters\": 3}", NAMES));
    assertNull(g.parse("x {\"name\": \"now\", \"arguments\": {}}", NAMES));
  }

  @Test
  void aTemplateWithoutToolsIsToldTheChosenSyntaxInTheSystemText() throws Exception {
    com.fasterxml.jackson.databind.JsonNode body = new com.fasterxml.jackson.databind.ObjectMapper()
        .readTree("{\"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"now\"}}],"
            + " \"tool_choice\": \"required\"}");
    assertTrue(Tools.read(body, ToolCallSyntax.HERMES).systemText().endsWith("reply with only"
        + " <tool_call>\n{\"name\": <function name>, \"arguments\": <arguments object>}\n</tool_call>."));
    assertTrue(Tools.read(body, ToolCallSyntax.GENERIC).systemText().endsWith("reply with only a"
        + " JSON object {\"name\": <function name>, \"arguments\": <arguments object>}."));
    assertTrue(Tools.read(body, ToolCallSyntax.HERMES).parallel());
    assertTrue(!Tools.read(body, ToolCallSyntax.GENERIC).parallel());
  }
}
