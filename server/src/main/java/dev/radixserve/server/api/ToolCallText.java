package dev.radixserve.server.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.TextNode;

/** Earlier tool calls of an assistant message, written back in the generic call format. */
final class ToolCallText {

  private static final ObjectMapper JSON = new ObjectMapper();

  private ToolCallText() {}

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
