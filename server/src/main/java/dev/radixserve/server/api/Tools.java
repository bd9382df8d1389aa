package dev.radixserve.server.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The {@code tools} and {@code tool_choice} of a chat request, validated.
 *
 * <p>A template that takes tools gets them as its {@code tools} variable; for one that does not
 * (the default one) the definitions go into a system message in the generic format. Calls are
 * written in the family's {@link ToolCallSyntax}. With {@code tool_choice} {@code required} or a
 * named function the reply is decoded under that syntax with the functions' parameter schemas;
 * with {@code auto} the model may write calls or plain text, and calls of listed functions in
 * that syntax become {@code tool_calls}.
 *
 * @param functions name to the function object as the client sent it
 * @param choice how calls are made
 * @param named the function {@code tool_choice} names; null otherwise
 * @param syntax how the model writes calls
 * @param parallel {@code parallel_tool_calls} (default true): several calls in one reply, where
 *     the syntax allows them (not the generic one)
 */
public record Tools(Map<String, ObjectNode> functions, Choice choice, String named,
    ToolCallSyntax syntax, boolean parallel) {

  /** The generic syntax: one call per reply. */
  public Tools(Map<String, ObjectNode> functions, Choice choice, String named) {
    this(functions, choice, named, ToolCallSyntax.GENERIC, false);
  }

  public enum Choice { AUTO, REQUIRED, NAMED }

  private static final Pattern NAME = Pattern.compile("[a-zA-Z0-9_-]{1,64}");

  /** Null when the request has no tools or {@code tool_choice} is {@code none}. */
  static Tools read(JsonNode body, ToolCallSyntax syntax) {
    JsonNode p = body.get("parallel_tool_calls");
    if (p != null && !p.isNull() && !p.isBoolean()) {
      throw ApiException.badRequest("parallel_tool_calls", "parallel_tool_calls must be a boolean");
    }
    boolean parallel = (p == null || p.isNull() || p.asBoolean()) && syntax.allowsParallel();
    JsonNode tools = body.get("tools");
    JsonNode choice = body.get("tool_choice");
    boolean none = choice != null && choice.isTextual() && choice.asText().equals("none");
    if (tools == null || tools.isNull()) {
      if (choice != null && !choice.isNull() && !none) {
        throw ApiException.badRequest("tool_choice", "tool_choice is only allowed when tools are given");
      }
      return null;
    }
    if (!tools.isArray() || tools.isEmpty()) {
      throw ApiException.badRequest("tools", "tools must be a non-empty list");
    }
    Map<String, ObjectNode> functions = new LinkedHashMap<>();
    for (JsonNode t : tools) {
      if (!t.isObject() || !"function".equals(t.path("type").asText())
          || !t.path("function").isObject()) {
        throw ApiException.badRequest("tools", "each tool must be {\"type\": \"function\","
            + " \"function\": {...}}");
      }
      ObjectNode f = (ObjectNode) t.get("function");
      String name = f.path("name").asText("");
      if (!NAME.matcher(name).matches()) {
        throw ApiException.badRequest("tools", "a function name must match [a-zA-Z0-9_-]{1,64}, got `"
            + name + "`");
      }
      JsonNode params = f.get("parameters");
      if (params != null && !params.isObject()) {
        throw ApiException.badRequest("tools", "parameters of `" + name + "` must be a JSON Schema object");
      }
      if (functions.put(name, f) != null) {
        throw ApiException.badRequest("tools", "function `" + name + "` is listed twice");
      }
    }
    if (choice == null || choice.isNull() || (choice.isTextual() && choice.asText().equals("auto"))) {
      return new Tools(functions, Choice.AUTO, null, syntax, parallel);
    }
    if (none) {
      return null;
    }
    if (choice.isTextual() && choice.asText().equals("required")) {
      return new Tools(functions, Choice.REQUIRED, null, syntax, parallel);
    }
    String named = choice.path("function").path("name").asText(null);
    if (!choice.isObject() || !"function".equals(choice.path("type").asText()) || named == null) {
      throw ApiException.badRequest("tool_choice", "tool_choice must be none, auto, required or"
          + " {\"type\": \"function\", \"function\": {\"name\": ...}}");
    }
    if (!functions.containsKey(named)) {
      throw ApiException.badRequest("tool_choice", "tool_choice names `" + named
          + "`, which is not among the tools");
    }
    return new Tools(functions, Choice.NAMED, named, syntax, parallel);
  }

  /** The parameter schemas of the functions a forced call may use, by name. */
  Map<String, JsonNode> callable() {
    Map<String, JsonNode> out = new LinkedHashMap<>();
    functions.forEach((name, f) -> {
      if (choice != Choice.NAMED || name.equals(named)) {
        JsonNode p = f.get("parameters");
        out.put(name, p == null ? JsonNodeFactory.instance.objectNode().put("type", "object") : p);
      }
    });
    return out;
  }

  /** The calls are forced: the reply is decoded as a call. */
  public boolean forced() {
    return choice != Choice.AUTO;
  }

  /** The definitions as the template's {@code tools} variable: OpenAI's list, as sent. */
  public java.util.List<Map<String, Object>> definitions() {
    java.util.List<Map<String, Object>> out = new ArrayList<>();
    functions.forEach((name, f) -> {
      Map<String, Object> tool = new LinkedHashMap<>();
      tool.put("type", "function");
      tool.put("function", JSON.convertValue(f, Map.class));
      out.add(tool);
    });
    return out;
  }

  private static final com.fasterxml.jackson.databind.ObjectMapper JSON =
      new com.fasterxml.jackson.databind.ObjectMapper();

  /** The system text that tells the model about the tools (a template without tools). */
  String systemText() {
    ArrayNode defs = JsonNodeFactory.instance.arrayNode();
    List<String> names = new ArrayList<>(callable().keySet());
    functions.forEach((name, f) -> {
      if (names.contains(name)) {
        defs.addObject().put("type", "function").set("function", f);
      }
    });
    String when = forced() ? "Call " + (choice == Choice.NAMED ? "`" + named + "`" : "one of them")
        + " now" : "To call one";
    if (syntax == ToolCallSyntax.GENERIC) {
      return "# Tools\nYou can call these functions:\n" + defs + "\n" + when + ", reply with only"
          + " a JSON object {\"name\": <function name>, \"arguments\": <arguments object>}.";
    }
    var l = syntax.layout();
    return "# Tools\nYou can call these functions:\n" + defs + "\n" + when + ", reply with only "
        + l.start() + l.head("<function name>") + "<arguments object>" + l.tail() + l.end() + ".";
  }
}
