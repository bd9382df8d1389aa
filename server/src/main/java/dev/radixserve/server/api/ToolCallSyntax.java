package dev.radixserve.server.api;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.radixserve.model.chat.ChatTemplate;
import dev.radixserve.model.constraint.ToolCallLayout;
import dev.radixserve.server.config.ToolCallParserSetting;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * How a model family writes tool calls in its reply, as vLLM's tool parsers read them: the
 * layout a forced call is decoded in ({@link ToolCallLayout}), the marker that starts calls in
 * free text, and the lenient reading of a whole reply ({@link #parse}).
 *
 * <ul>
 *   <li>{@link #HERMES} (Qwen2.5, Qwen3, Hermes): {@code <tool_call>\n{"name": ..., "arguments":
 *       {...}}\n</tool_call>}, one or several; text before the first is content.
 *   <li>{@link #LLAMA3_JSON} (Llama 3.1/3.2/3.3): {@code {"name": ..., "parameters": {...}}}
 *       ({@code arguments} accepted too), optionally after {@code <|python_tag|>}, several
 *       separated by {@code ;}.
 *   <li>{@link #MISTRAL}: {@code [TOOL_CALLS][{"name": ..., "arguments": {...}}, ...]}; ids are
 *       9 letters and digits, which Mistral's template requires of the calls it is shown again.
 *   <li>{@link #GENERIC} (templates without tools): the whole reply is one {@code {"name": ...,
 *       "arguments": {...}}}; one call per reply (as before parallel calls existed).
 * </ul>
 */
public enum ToolCallSyntax {
  HERMES(new ToolCallLayout("", "<tool_call>\n", "arguments", "\n</tool_call>", "\n", ""),
      "<tool_call>"),
  LLAMA3_JSON(new ToolCallLayout("", "", "parameters", "", "; ", ""), "<|python_tag|>"),
  MISTRAL(new ToolCallLayout("[TOOL_CALLS][", "", "arguments", "", ", ", "]"), "[TOOL_CALLS]"),
  GENERIC(ToolCallLayout.GENERIC, null);

  /** A reply read as calls: the text before them (empty when none) and the calls. */
  public record Parsed(String content, List<Call> calls) {}

  /** One call: the function's name and its arguments as JSON text. */
  public record Call(String name, String arguments) {}

  /** Reads the first JSON value of a text (trailing text is not an error: {@link #end} finds it). */
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final String ALPHANUMERIC =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

  private final ToolCallLayout layout;
  private final String marker;

  ToolCallSyntax(ToolCallLayout layout, String marker) {
    this.layout = layout;
    this.marker = marker;
  }

  public ToolCallLayout layout() {
    return layout;
  }

  /**
   * The syntax {@code setting} names, or for {@code auto} the template's family: a template
   * that never reads {@code tools} gets the generic format (its definitions go into the system
   * message); one that does is known by what it writes for calls.
   */
  public static ToolCallSyntax of(ToolCallParserSetting setting, ChatTemplate template) {
    return switch (setting) {
      case HERMES -> HERMES;
      case LLAMA3_JSON -> LLAMA3_JSON;
      case MISTRAL -> MISTRAL;
      case GENERIC -> GENERIC;
      case AUTO -> {
        String s = template.source();
        if (!template.takesTools()) {
          yield GENERIC;
        } else if (s.contains("<tool_call>")) {
          yield HERMES;
        } else if (s.contains("[TOOL_CALLS]")) {
          yield MISTRAL;
        } else if (s.contains("<|python_tag|>") || s.contains("<|start_header_id|>")) {
          yield LLAMA3_JSON;
        }
        yield GENERIC;
      }
    };
  }

  /**
   * Where calls may start in {@code text} (free text, tool_choice auto): 0 when the reply itself
   * opens with a JSON object (Llama, generic), else the index of the family's marker; -1 when no
   * call has started (yet).
   */
  public int callStart(CharSequence text) {
    return callStart(text, 0);
  }

  /**
   * As {@link #callStart(CharSequence)}, for a text whose first {@code from} characters are
   * known to start no call (a stream's content sent so far): the marker is looked for after
   * them only, so a long reply is not scanned again for every piece.
   */
  public int callStart(CharSequence text, int from) {
    boolean bareJson = this == LLAMA3_JSON || this == GENERIC;
    if (bareJson && from == 0) {
      for (int i = 0; i < text.length(); i++) {
        if (!Character.isWhitespace(text.charAt(i))) {
          if (text.charAt(i) == '{') {
            return 0;
          }
          break;
        }
      }
    }
    if (marker == null) {
      return -1;
    }
    for (int i = Math.max(0, from); i + marker.length() <= text.length(); i++) {
      if (CharSequence.compare(text.subSequence(i, i + marker.length()), marker) == 0) {
        return i;
      }
    }
    return -1;
  }

  /**
   * How many characters at the end of {@code text} (no call started) might be the start of the
   * marker, to hold back from a stream until the next piece says.
   */
  public int markerPrefixAtEnd(CharSequence text) {
    if (marker == null) {
      return 0;
    }
    for (int n = Math.min(marker.length() - 1, text.length()); n > 0; n--) {
      if (marker.startsWith(text.subSequence(text.length() - n, text.length()).toString())) {
        return n;
      }
    }
    return 0;
  }

  /**
   * A whole reply read as content followed by calls of the functions {@code names}, or null
   * when it holds no call or a call that does not parse (the whole reply is then content). Only
   * whitespace may follow the calls.
   */
  public Parsed parse(String text, Set<String> names) {
    int start = callStart(text);
    if (start < 0) {
      return null;
    }
    String content = text.substring(0, start);
    String rest = text.substring(start);
    List<Call> calls = switch (this) {
      case HERMES -> hermes(rest, names);
      case LLAMA3_JSON -> objects(rest.startsWith(marker) ? rest.substring(marker.length()) : rest,
          ';', names);
      case MISTRAL -> mistral(rest.substring(marker.length()), names);
      case GENERIC -> {
        List<Call> one = objects(rest, '\n', names);
        yield one != null && one.size() == 1 ? one : null;
      }
    };
    return calls == null || calls.isEmpty() ? null : new Parsed(content, calls);
  }

  private static List<Call> hermes(String text, Set<String> names) {
    List<Call> calls = new ArrayList<>();
    String rest = text;
    while (!rest.isBlank()) {
      rest = rest.stripLeading();
      if (!rest.startsWith("<tool_call>")) {
        return null;
      }
      int close = rest.indexOf("</tool_call>");
      String body = close < 0 ? rest.substring(11) : rest.substring(11, close);
      Call c = call(body.strip(), names);
      if (c == null) {
        return null;
      }
      calls.add(c);
      rest = close < 0 ? "" : rest.substring(close + 12);
    }
    return calls;
  }

  private static List<Call> mistral(String text, Set<String> names) {
    try {
      JsonNode n = JSON.readTree(text);
      if (n == null || !text.substring(end(text)).isBlank()) {
        return null;
      }
      List<Call> calls = new ArrayList<>();
      for (JsonNode one : n.isArray() ? n : JSON.createArrayNode().add(n)) {
        Call c = call(one, names);
        if (c == null) {
          return null;
        }
        calls.add(c);
      }
      return calls;
    } catch (Exception e) {
      return null;
    }
  }

  /** JSON objects one after another, {@code separator} (and whitespace) between them. */
  private static List<Call> objects(String text, char separator, Set<String> names) {
    List<Call> calls = new ArrayList<>();
    String rest = text.strip();
    while (!rest.isEmpty()) {
      try (JsonParser p = JSON.createParser(rest)) {
        JsonNode n = JSON.readTree(p);
        Call c = n == null ? null : call(n, names);
        if (c == null) {
          return null;
        }
        calls.add(c);
        rest = rest.substring((int) p.currentLocation().getCharOffset()).strip();
      } catch (Exception e) {
        return null;
      }
      if (!rest.isEmpty()) {
        if (rest.charAt(0) != separator && separator != '\n') {
          return null;
        }
        rest = rest.charAt(0) == separator ? rest.substring(1).strip() : rest;
      }
    }
    return calls;
  }

  /** Where the first JSON value of {@code text} ends. */
  private static int end(String text) throws java.io.IOException {
    try (JsonParser p = JSON.createParser(text)) {
      JSON.readTree(p);
      return (int) p.currentLocation().getCharOffset();
    }
  }

  private static Call call(String json, Set<String> names) {
    try {
      JsonNode n = JSON.readTree(json);
      return n != null && json.substring(end(json)).isBlank() ? call(n, names) : null;
    } catch (Exception e) {
      return null;
    }
  }

  /** {@code {"name": listed, "arguments"|"parameters": {...}}}, nothing else. */
  private static Call call(JsonNode n, Set<String> names) {
    if (!n.isObject() || n.size() != 2 || !n.path("name").isTextual()
        || !names.contains(n.get("name").asText())) {
      return null;
    }
    JsonNode args = n.has("arguments") ? n.get("arguments") : n.get("parameters");
    return args != null && args.isObject() ? new Call(n.get("name").asText(), args.toString())
        : null;
  }

  /**
   * The texts of the special tokens this syntax writes around forced calls: kept in the
   * constraint's vocabulary (Mistral's {@code [TOOL_CALLS]} is a control token; Qwen's
   * {@code <tool_call>} is an added token that is not special, kept anyway).
   */
  public Set<String> markers() {
    return switch (this) {
      case HERMES -> Set.of("<tool_call>", "</tool_call>");
      case MISTRAL -> Set.of(marker);
      case LLAMA3_JSON, GENERIC -> Set.of();
    };
  }

  /** Whether a reply may hold several calls (all but the generic format). */
  public boolean allowsParallel() {
    return this != GENERIC;
  }

  /** A new call id: OpenAI's {@code call_} and 24 letters and digits; Mistral's 9. */
  public String newId() {
    int n = this == MISTRAL ? 9 : 24;
    StringBuilder sb = new StringBuilder(this == MISTRAL ? "" : "call_");
    for (int i = 0; i < n; i++) {
      sb.append(ALPHANUMERIC.charAt(RANDOM.nextInt(ALPHANUMERIC.length())));
    }
    return sb.toString();
  }
}
