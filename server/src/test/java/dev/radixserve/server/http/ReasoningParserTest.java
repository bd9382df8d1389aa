package dev.radixserve.server.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.radixserve.server.api.ReasoningSyntax;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * {@link ReasoningParser} against vLLM's reasoning parsers ({@code reasoning-parsers/expected.json},
 * written by {@code make_expected.py} with vLLM's logic): for each parser, prompt and reply, the
 * whole reply's split, and the same split however the reply is cut into deltas (every cut into
 * two and three pieces, and one character at a time), so a tag split across tokens and chunks is
 * found.
 */
class ReasoningParserTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  /** The split as a client reads it: reasoning (null when none), content (null when none). */
  private record Reply(String reasoning, String content) {}

  private static Reply run(ReasoningSyntax.Start start, List<String> pieces) {
    ReasoningParser p = new ReasoningParser(start);
    StringBuilder reasoning = new StringBuilder();
    StringBuilder content = new StringBuilder();
    for (String piece : pieces) {
      ReasoningParser.Split s = p.feed(piece);
      reasoning.append(s.reasoning());
      content.append(s.content());
    }
    ReasoningParser.Split s = p.finish();
    reasoning.append(s.reasoning());
    content.append(s.content());
    assertTrue(p.reasoned() || reasoning.isEmpty(), "reasoning without a reasoning part");
    return new Reply(p.reasoned() ? reasoning.toString() : null,
        p.reasoned() && content.isEmpty() ? null : content.toString());
  }

  @TestFactory
  List<DynamicTest> splitsAsVllmDoesStreamedAndWhole() throws Exception {
    JsonNode fixture;
    try (InputStream in = getClass().getResourceAsStream("/reasoning-parsers/expected.json")) {
      fixture = JSON.readTree(in);
    }
    List<DynamicTest> tests = new ArrayList<>();
    int compared = 0;
    for (JsonNode c : fixture.get("cases")) {
      if (!c.has("differs")) {
        compared++;
      }
      ReasoningSyntax syntax = ReasoningSyntax.valueOf(c.get("parser").asText().toUpperCase());
      String prompt = fixture.get("prompts").get(c.get("prompt").asText()).asText();
      String text = c.get("text").asText();
      Reply expected = new Reply(c.get("reasoning").asText(null), c.get("content").asText(null));
      tests.add(DynamicTest.dynamicTest(c.get("parser").asText() + " " + c.get("prompt").asText()
          + " " + JSON.writeValueAsString(text), () -> {
            ReasoningSyntax.Start start = syntax.start(prompt);
            assertEquals(expected, run(start, List.of(text)), "whole");
            List<String> chars = new ArrayList<>();
            text.codePoints().forEach(cp -> chars.add(Character.toString(cp)));
            assertEquals(expected, run(start, chars), "one character at a time");
            for (int i = 0; i <= text.length(); i++) {
              assertEquals(expected, run(start, List.of(text.substring(0, i), text.substring(i))),
                  "cut at " + i);
              for (int j = i; j <= text.length(); j++) {
                assertEquals(expected, run(start, List.of(text.substring(0, i),
                    text.substring(i, j), text.substring(j))), "cut at " + i + ", " + j);
              }
            }
          }));
    }
    assertTrue(compared >= 70, compared + " cases compared with vLLM");
    return tests;
  }
}
