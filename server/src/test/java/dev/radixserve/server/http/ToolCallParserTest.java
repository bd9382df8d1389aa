package dev.radixserve.server.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.radixserve.server.api.ToolCallSyntax;
import dev.radixserve.server.api.Tools;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The generic tool-call format read piece by piece: any split gives the same call. */
class ToolCallParserTest {

  private static Tools tools(Tools.Choice choice) {
    Map<String, ObjectNode> f = new LinkedHashMap<>();
    f.put("get_weather", JsonNodeFactory.instance.objectNode().put("name", "get_weather"));
    return new Tools(f, choice, null);
  }

  /** The events of {@code text} fed to {@code p} in random pieces of 1 to 6 characters. */
  private static List<ToolCallParser.Event> events(ToolCallParser p, String text,
      boolean complete, long seed) {
    SplittableRandom rnd = new SplittableRandom(seed);
    List<ToolCallParser.Event> events = new ArrayList<>();
    for (int i = 0; i < text.length(); ) {
      int n = 1 + rnd.nextInt(6);
      events.addAll(p.feed(text.substring(i, Math.min(text.length(), i + n))));
      i += n;
    }
    events.addAll(p.finish(complete));
    return events;
  }

  /** Content, name and arguments of {@code text} fed in random pieces. */
  private static List<String> read(Tools tools, String text, boolean complete, long seed) {
    ToolCallParser p = new ToolCallParser(tools);
    List<ToolCallParser.Event> events = events(p, text, complete, seed);
    StringBuilder content = new StringBuilder();
    StringBuilder args = new StringBuilder();
    String name = null;
    int starts = 0;
    for (ToolCallParser.Event e : events) {
      switch (e) {
        case ToolCallParser.Content c -> content.append(c.text());
        case ToolCallParser.Start s -> {
          name = s.name();
          starts++;
          assertTrue(s.id().matches("call_[A-Za-z0-9]{24}"), s.id());
        }
        case ToolCallParser.Arguments a -> args.append(a.fragment());
      }
    }
    assertTrue(starts <= 1);
    return List.of(content.toString(), String.valueOf(name), args.toString(),
        String.valueOf(p.isCall()));
  }

  @Test
  void forcedCallSplitAnywhereGivesTheSameArguments() {
    String text = "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo}\", \"n\": [1, {}]}}";
    for (long seed = 0; seed < 50; seed++) {
      assertEquals(List.of("", "get_weather", "{\"city\": \"Oslo}\", \"n\": [1, {}]}", "true"),
          read(tools(Tools.Choice.REQUIRED), text, true, seed));
    }
  }

  @Test
  void aForcedCallCutByLengthKeepsWhatItHas() {
    String cut = "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Os";
    assertEquals(List.of("", "get_weather", "{\"city\": \"Os", "true"),
        read(tools(Tools.Choice.REQUIRED), cut, false, 1));
    assertEquals(List.of("{\"name\": \"get_", "null", "", "false"),
        read(tools(Tools.Choice.REQUIRED), "{\"name\": \"get_", false, 1));
  }

  @Test
  void autoDecidesOnTheWholeReply() {
    Tools auto = tools(Tools.Choice.AUTO);
    assertEquals(List.of("", "get_weather", "{\"city\":\"Oslo\"}", "true"),
        read(auto, " {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}", true, 2));
    assertEquals(List.of("{\"name\": \"other\", \"arguments\": {}}", "null", "", "false"),
        read(auto, "{\"name\": \"other\", \"arguments\": {}}", true, 3));
    assertEquals(List.of("Hello {there}", "null", "", "false"), read(auto, "Hello {there}", true, 4));
    assertFalse(Boolean.parseBoolean(read(auto, "  ", true, 5).get(3)));
  }

  // ---- the families' syntaxes, several calls ----

  private static Tools family(ToolCallSyntax syntax, Tools.Choice choice, boolean parallel) {
    Map<String, ObjectNode> f = new LinkedHashMap<>();
    f.put("get_weather", JsonNodeFactory.instance.objectNode().put("name", "get_weather"));
    f.put("now", JsonNodeFactory.instance.objectNode().put("name", "now"));
    return new Tools(f, choice, null, syntax, parallel);
  }

  /** Content, then per call "name args", of {@code text} fed in random pieces. */
  private static List<String> calls(Tools tools, String text, boolean complete, long seed) {
    List<ToolCallParser.Event> events = events(new ToolCallParser(tools), text, complete, seed);
    StringBuilder content = new StringBuilder();
    List<StringBuilder> calls = new ArrayList<>();
    for (ToolCallParser.Event e : events) {
      switch (e) {
        case ToolCallParser.Content c -> {
          assertTrue(calls.isEmpty(), "content after a call started: " + c);
          content.append(c.text());
        }
        case ToolCallParser.Start s -> {
          assertEquals(calls.size(), s.index());
          calls.add(new StringBuilder(s.name()).append(' '));
        }
        case ToolCallParser.Arguments a -> calls.get(a.index()).append(a.fragment());
      }
    }
    List<String> out = new ArrayList<>();
    out.add(content.toString());
    calls.forEach(c -> out.add(c.toString()));
    return out;
  }

  private static final String HERMES_TWO = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\":"
      + " {\"city\": \"O}\\\"slo\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"now\", \"arguments\": {}}"
      + "\n</tool_call>";

  @Test
  void forcedHermesCallsSplitAnywhereGiveTheSameCalls() {
    for (long seed = 0; seed < 50; seed++) {
      assertEquals(List.of("", "get_weather {\"city\": \"O}\\\"slo\"}", "now {}"),
          calls(family(ToolCallSyntax.HERMES, Tools.Choice.REQUIRED, true), HERMES_TWO, true, seed));
    }
  }

  @Test
  void forcedLlamaAndMistralCallsSplitAnywhereGiveTheSameCalls() {
    String llama = "{\"name\": \"now\", \"parameters\": {}}; {\"name\": \"get_weather\","
        + " \"parameters\": {\"city\": \"[Oslo]\"}}";
    String mistral = "[TOOL_CALLS][{\"name\": \"now\", \"arguments\": {}}, {\"name\": \"get_weather\","
        + " \"arguments\": {\"city\": \"[Oslo]\"}}]";
    for (long seed = 0; seed < 30; seed++) {
      List<String> expected = List.of("", "now {}", "get_weather {\"city\": \"[Oslo]\"}");
      assertEquals(expected, calls(family(ToolCallSyntax.LLAMA3_JSON, Tools.Choice.REQUIRED, true),
          llama, true, seed));
      assertEquals(expected, calls(family(ToolCallSyntax.MISTRAL, Tools.Choice.REQUIRED, true),
          mistral, true, seed));
    }
  }

  @Test
  void aForcedHermesCallCutByLengthKeepsWhatItHas() {
    assertEquals(List.of("", "get_weather {\"city\": \"O}"), calls(family(ToolCallSyntax.HERMES,
        Tools.Choice.REQUIRED, true), HERMES_TWO.substring(0, HERMES_TWO.indexOf("O}") + 2), false, 3));
    assertEquals(List.of("<tool_call>\n{\"na"), calls(family(ToolCallSyntax.HERMES,
        Tools.Choice.REQUIRED, true), "<tool_call>\n{\"na", false, 3));
  }

  @Test
  void autoHermesStreamsContentUntilTheMarkerAndParsesTheRest() {
    Tools auto = family(ToolCallSyntax.HERMES, Tools.Choice.AUTO, true);
    for (long seed = 0; seed < 30; seed++) {
      assertEquals(List.of("I will check <tool> tags.\n", "get_weather {\"city\":\"O}\\\"slo\"}", "now {}"),
          calls(auto, "I will check <tool> tags.\n" + HERMES_TWO, true, seed));
      // malformed calls: everything is content
      String bad = "Hi <tool_call>\n{\"name\": \"now\", \"arguments\": [}\n</tool_call>";
      assertEquals(List.of(bad), calls(auto, bad, true, seed));
      assertEquals(List.of("plain <tool_c"), calls(auto, "plain <tool_c", false, seed));
    }
    // parallel_tool_calls false: the first call only
    assertEquals(List.of("", "get_weather {\"city\":\"O}\\\"slo\"}"),
        calls(family(ToolCallSyntax.HERMES, Tools.Choice.AUTO, false), HERMES_TWO, true, 1));
  }

  @Test
  void autoLlamaCallsStartAtThePythonTagOrAnOpeningBrace() {
    Tools auto = family(ToolCallSyntax.LLAMA3_JSON, Tools.Choice.AUTO, true);
    for (long seed = 0; seed < 20; seed++) {
      assertEquals(List.of("", "now {}", "get_weather {\"city\":\"x\"}"), calls(auto,
          "  {\"name\": \"now\", \"parameters\": {}}; {\"name\": \"get_weather\", \"parameters\":"
              + " {\"city\": \"x\"}}", true, seed));
      assertEquals(List.of("So: ", "now {}"), calls(auto,
          "So: <|python_tag|>{\"name\": \"now\", \"parameters\": {}}", true, seed));
      assertEquals(List.of("So {\"name\": \"now\", \"parameters\": {}}"), calls(auto,
          "So {\"name\": \"now\", \"parameters\": {}}", true, seed));
    }
  }

  /** Whatever the reply, auto mode's streamed pieces reassemble to the whole reply's reading. */
  @Test
  void autoStreamReassemblesToTheWholeReplyForRandomReplies() {
    String[] pieces = {"<tool_call>", "</tool_call>", "<|python_tag|>", "[TOOL_CALLS]", "\n", " ",
        "; ", ", ", "[", "]", "{", "}", "Hi", "<tool", "{\"name\": \"now\", \"arguments\": {}}",
        "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"x\"}}", "\"", "{\"name\": \"rm\"}"};
    SplittableRandom rnd = new SplittableRandom(7);
    List<String> texts = new ArrayList<>(List.of(
        // a reply that opens with JSON is read from its start, not from a later marker
        "{\"x\": 1} <|python_tag|>{\"name\": \"now\", \"parameters\": {}}",
        "{<tool_call>{\"name\": \"now\", \"arguments\": {}}</tool_call>",
        " <|python_tag|>{\"name\": \"now\", \"parameters\": {}}"));
    for (int round = 0; round < 400; round++) {
      StringBuilder text = new StringBuilder();
      for (int k = rnd.nextInt(1, 7); k > 0; k--) {
        text.append(pieces[rnd.nextInt(pieces.length)]);
      }
      texts.add(text.toString());
    }
    int round = 0;
    for (String text : texts) {
      round++;
      for (ToolCallSyntax syntax : ToolCallSyntax.values()) {
        for (boolean parallel : new boolean[] {false, true}) {
          Tools auto = family(syntax, Tools.Choice.AUTO, parallel);
          ToolCallParser whole = new ToolCallParser(auto);
          List<ToolCallParser.Event> all = new ArrayList<>(whole.feed(text));
          all.addAll(whole.finish(true));
          assertEquals(reading(all), calls(auto, text, true, round),
              syntax + " " + parallel + ": " + text);
        }
      }
    }
  }

  /** Content, then per call "name args". */
  private static List<String> reading(List<ToolCallParser.Event> events) {
    StringBuilder content = new StringBuilder();
    List<StringBuilder> calls = new ArrayList<>();
    for (ToolCallParser.Event e : events) {
      switch (e) {
        case ToolCallParser.Content c -> content.append(c.text());
        case ToolCallParser.Start s -> calls.add(new StringBuilder(s.name()).append(' '));
        case ToolCallParser.Arguments a -> calls.get(a.index()).append(a.fragment());
      }
    }
    List<String> out = new ArrayList<>();
    out.add(content.toString());
    calls.forEach(c -> out.add(c.toString()));
    return out;
  }
}
