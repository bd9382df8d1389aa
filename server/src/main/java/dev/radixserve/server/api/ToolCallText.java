package dev.radixserve.server.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.TextNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Earlier tool calls of an assistant message: written back in the generic call format for a
 * template without tools, or handed to one that takes them as OpenAI's fields.
 */
final class ToolCallText {

  private static final ObjectMapper JSON = new ObjectMapper();

  private ToolCallText() {}

  /**
   * OpenAI's {@code tool_calls} as plain maps for a template, each {@code function.arguments}
   * JSON text parsed into its object (as vLLM does before it renders: Qwen's and Llama's
   * templates write {@code arguments | tojson}); arguments that do not parse stay text.
   */
  static List<Map<String, Object>> asMaps(JsonNode calls) {
    List<Map<String, Object>> out = new ArrayList<>();
    for (JsonNode call : calls) {
      JsonNode f = call.path("function");
      if (!call.isObject() || !f.path("name").isTextual()) {
        throw ApiException.badRequest("messages", "a tool call must have function.name");
      }
      @SuppressWarnings("unchecked")
      Map<String, Object> one = JSON.convertValue(call, LinkedHashMap.class);
      @SuppressWarnings("unchecked")
      Map<String, Object> function = JSON.convertValue(f, LinkedHashMap.class);
      JsonNode args = f.get("arguments");
      if (args != null && args.isTextual()) {
        try {
          function.put("arguments", JSON.convertValue(JSON.readTree(args.asText()), Object.class));
        } catch (Exception e) {
          // as the client sent it
        }
      }
      one.put("function", function);
      out.add(one);
    }
    return out;
  }

  /** One {@code {"name": ..., "arguments": ...}} object per call, one per line. */
  static String render(JsonNode calls) {
    StringBuilder sb = new StringBuilder();
    for (JsonNode call : calls) {
      JsonNode f = call.path("function");
      if (!f.path("name").isTextual()) {
        throw ApiException.badRequest("messages", "a tool call must have function.name");
      }
      String args = f.path("arguments").asText("{}");
      JsonNode parsed;
      try {
        parsed = JSON.readTree(args);
      } catch (Exception e) {
        parsed = TextNode.valueOf(args); // as the client sent it
      }
      if (!sb.isEmpty()) {
        sb.append('\n');
      }
      sb.append("{\"name\": ").append(TextNode.valueOf(f.get("name").asText()))
          .append(", \"arguments\": ").append(parsed).append('}');
    }
    return sb.toString();
  }
}
