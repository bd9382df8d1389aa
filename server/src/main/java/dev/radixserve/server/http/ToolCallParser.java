package dev.radixserve.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import dev.radixserve.server.api.Tools;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads one chat choice's text as it streams in, in the generic tool-call format
 * ({@code {"name": "NAME", "arguments": {...}}}, see {@link Tools}), and says what to send:
 * content, the start of a call, or a piece of its arguments. The non-streamed reply feeds the same
 * parser its whole text, so the streamed pieces always reassemble to it.
 *
 * <ul>
 *   <li>Forced calls (tool_choice required or named; the output was decoded under the format):
 *       the call starts once its name is complete; the arguments then stream with the last
 *       character held back, which is the wrapper's closing brace when the call completes.
 *   <li>{@code auto}: text that starts with {@code {} is held until the choice ends and is a
 *       call if it parses as one of a listed function; any other text streams as content.
 * </ul>
 */
final class ToolCallParser {

  sealed interface Event {}

  record Content(String text) implements Event {}

  record Start(String id, String name) implements Event {}

  record Arguments(String fragment) implements Event {}

  private static final Pattern PREFIX =
      Pattern.compile("\\{\"name\": \"([a-zA-Z0-9_-]{1,64})\", \"arguments\": ");
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final String ALPHABET =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

  private enum Mode { UNDECIDED, CONTENT, HELD, NAME, ARGUMENTS }

  private final Tools tools;
  private final StringBuilder held = new StringBuilder();
  private Mode mode;
  private boolean call;

  ToolCallParser(Tools tools) {
    this.tools = tools;
    this.mode = tools.forced() ? Mode.NAME : Mode.UNDECIDED;
  }

  /** Whether the choice turned out to be a tool call. */
  boolean isCall() {
    return call;
  }

  List<Event> feed(String text) {
    List<Event> out = new ArrayList<>();
    held.append(text);
    switch (mode) {
      case UNDECIDED -> {
        String t = held.toString().stripLeading();
        if (!t.isEmpty()) {
          mode = t.startsWith("{") ? Mode.HELD : Mode.CONTENT;
          if (mode == Mode.CONTENT) {
            out.add(new Content(take(held.length())));
          }
        }
      }
      case CONTENT -> out.add(new Content(take(held.length())));
      case NAME -> {
        Matcher m = PREFIX.matcher(held);
        if (m.lookingAt()) {
          call = true;
          out.add(new Start(newId(), m.group(1)));
          held.delete(0, m.end());
          mode = Mode.ARGUMENTS;
          argumentsSoFar(out);
        }
      }
      case ARGUMENTS -> argumentsSoFar(out);
      case HELD -> { }
    }
    return out;
  }

  /** The choice ended; {@code complete}: by its constraint or an end token, not by length. */
  List<Event> finish(boolean complete) {
    List<Event> out = new ArrayList<>();
    switch (mode) {
      case ARGUMENTS -> {
        String rest = take(held.length());
        if (complete && rest.endsWith("}")) {
          rest = rest.substring(0, rest.length() - 1);
        }
        if (!rest.isEmpty()) {
          out.add(new Arguments(rest));
        }
      }
      case HELD -> {
        String text = take(held.length());
        JsonNode parsed = parse(text.strip());
        if (parsed != null) {
          call = true;
          out.add(new Start(newId(), parsed.get("name").asText()));
          out.add(new Arguments(parsed.get("arguments").toString()));
        } else {
          out.add(new Content(text));
        }
      }
      default -> {
        if (!held.isEmpty()) {
          out.add(new Content(take(held.length())));
        }
      }
    }
    return out;
  }

  private void argumentsSoFar(List<Event> out) {
    if (held.length() > 1) {
      out.add(new Arguments(take(held.length() - 1)));
    }
  }

  private String take(int n) {
    String s = held.substring(0, n);
    held.delete(0, n);
    return s;
  }

  /** The text as a call of a listed function, or null. */
  private JsonNode parse(String text) {
    try {
      JsonNode n = Responses.JSON.readTree(text);
      if (n != null && n.isObject() && n.size() == 2 && n.path("name").isTextual()
          && tools.functions().containsKey(n.get("name").asText())
          && n.path("arguments").isObject()) {
        return n;
      }
    } catch (Exception e) {
      // not JSON: content
    }
    return null;
  }

  /** OpenAI's shape: {@code call_} and 24 letters and digits. */
  private static String newId() {
    StringBuilder sb = new StringBuilder("call_");
    for (int i = 0; i < 24; i++) {
      sb.append(ALPHABET.charAt(RANDOM.nextInt(ALPHABET.length())));
    }
    return sb.toString();
  }
}
