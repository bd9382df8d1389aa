package dev.radixserve.server.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
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

  /** Content, name and arguments of {@code text} fed in random pieces. */
  private static List<String> read(Tools tools, String text, boolean complete, long seed) {
    ToolCallParser p = new ToolCallParser(tools);
    SplittableRandom rnd = new SplittableRandom(seed);
    List<ToolCallParser.Event> events = new ArrayList<>();
    for (int i = 0; i < text.length(); ) {
      int n = 1 + rnd.nextInt(6);
      events.addAll(p.feed(text.substring(i, Math.min(text.length(), i + n))));
      i += n;
    }
    events.addAll(p.finish(complete));
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
}
