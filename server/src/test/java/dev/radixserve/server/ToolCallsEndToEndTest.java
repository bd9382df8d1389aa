package dev.radixserve.server;

import static dev.radixserve.server.StructuredOutputsEndToEndTest.JSON;
import static dev.radixserve.server.StructuredOutputsEndToEndTest.chat;
import static dev.radixserve.server.StructuredOutputsEndToEndTest.ok;
import static dev.radixserve.server.StructuredOutputsEndToEndTest.post;
import static dev.radixserve.server.StructuredOutputsEndToEndTest.schema;
import static dev.radixserve.server.StructuredOutputsEndToEndTest.validate;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** OpenAI tool calling in the generic format, end to end on the embedded model. */
class ToolCallsEndToEndTest {

  private static RadixServer server;

  static final Map<String, String> TOOLS = Map.of(
      "get_weather", "{'type':'object','properties':{'city':{'type':'string','maxLength':10},"
          + "'unit':{'enum':['celsius','fahrenheit']}},'required':['city','unit'],"
          + "'additionalProperties':false}",
      "get_time", "{'type':'object','properties':{'tz':{'type':'string','pattern':'^[A-Z]{3}$'}},"
          + "'required':['tz']}");

  @BeforeAll
  static void start() {
    server = RadixServer.start(LocalServers.builder(256).build());
  }

  @AfterAll
  static void stop() {
    server.shutdown(Duration.ofSeconds(5));
  }

  static ObjectNode withTools(ObjectNode body) {
    ArrayNode tools = body.putArray("tools");
    TOOLS.forEach((name, params) -> {
      ObjectNode f = tools.addObject().put("type", "function").putObject("function");
      f.put("name", name).put("description", "tool " + name).set("parameters", schema(params));
    });
    return body;
  }

  private static void assertValidCall(JsonNode call, String expectedName) throws Exception {
    assertTrue(call.get("id").asText().startsWith("call_"), call.toString());
    assertEquals("function", call.get("type").asText());
    String name = call.at("/function/name").asText();
    if (expectedName != null) {
      assertEquals(expectedName, name);
    }
    assertTrue(TOOLS.containsKey(name), name);
    JsonNode args = JSON.readTree(call.at("/function/arguments").asText());
    assertTrue(validate(schema(TOOLS.get(name)), args).isEmpty(), args.toString());
  }

  @Test
  void requiredAndNamedCallsParseAndValidate() throws Exception {
    for (int seed = 0; seed < 4; seed++) {
      ObjectNode body = withTools(chat("What is the weather in Oslo?", 120))
          .put("tool_choice", "required").put("temperature", 1.0).put("seed", seed);
      JsonNode c = ok(server, "/v1/chat/completions", body).at("/choices/0");
      assertEquals("tool_calls", c.get("finish_reason").asText(), c.toString());
      assertTrue(c.at("/message/content").isNull(), c.toString());
      assertEquals(1, c.at("/message/tool_calls").size());
      assertValidCall(c.at("/message/tool_calls/0"), null);
    }
    ObjectNode named = withTools(chat("time?", 120)).put("temperature", 0.0);
    named.putObject("tool_choice").put("type", "function").putObject("function")
        .put("name", "get_time");
    JsonNode c = ok(server, "/v1/chat/completions", named).at("/choices/0");
    assertEquals("tool_calls", c.get("finish_reason").asText());
    assertValidCall(c.at("/message/tool_calls/0"), "get_time");
  }

  @Test
  void streamedToolCallsReassembleToTheNonStreamedCall() throws Exception {
    for (String choice : new String[] {"required", "get_weather"}) {
      ObjectNode body = withTools(chat("weather please", 120)).put("temperature", 0.0);
      if (choice.equals("required")) {
        body.put("tool_choice", choice);
      } else {
        body.putObject("tool_choice").put("type", "function").putObject("function")
            .put("name", choice);
      }
      JsonNode whole = ok(server, "/v1/chat/completions", body).at("/choices/0");
      body.put("stream", true);
      HttpResponse<String> r = post(server, "/v1/chat/completions", body);
      assertEquals(200, r.statusCode(), r.body());
      String name = null;
      String id = null;
      StringBuilder args = new StringBuilder();
      String finish = null;
      int argChunks = 0;
      for (String event : r.body().split("\n\n")) {
        if (event.equals("data: [DONE]")) {
          continue;
        }
        JsonNode ch = JSON.readTree(event.substring(6)).at("/choices/0");
        JsonNode d = ch.get("delta");
        assertFalse(d.hasNonNull("content") && !d.get("content").asText().isEmpty(), event);
        if (d.has("tool_calls")) {
          JsonNode tc = d.get("tool_calls").get(0);
          assertEquals(0, tc.get("index").asInt());
          if (tc.has("id")) {
            assertEquals(null, id, "one call, started once");
            id = tc.get("id").asText();
            name = tc.at("/function/name").asText();
            assertEquals("function", tc.get("type").asText());
          } else {
            argChunks++;
          }
          args.append(tc.at("/function/arguments").asText());
        }
        if (!ch.get("finish_reason").isNull()) {
          finish = ch.get("finish_reason").asText();
        }
      }
      assertNotNull(id);
      assertTrue(argChunks > 1, "arguments stream in pieces, got " + argChunks);
      assertEquals(whole.at("/message/tool_calls/0/function/name").asText(), name);
      assertEquals(whole.at("/message/tool_calls/0/function/arguments").asText(), args.toString());
      assertEquals("tool_calls", finish);
    }
  }

  @Test
  void autoAndNoneLeavePlainTextAndAConversationWithCallsIsAccepted() {
    for (String choice : new String[] {"auto", "none"}) {
      ObjectNode body = withTools(chat("hello", 8)).put("tool_choice", choice).put("temperature", 0.0);
      JsonNode c = ok(server, "/v1/chat/completions", body).at("/choices/0");
      assertTrue(c.at("/message/content").isTextual(), c.toString());
      assertFalse(c.at("/message").has("tool_calls"), c.toString());
      assertEquals("length", c.get("finish_reason").asText());
    }
    ObjectNode turn = withTools(JSON.createObjectNode().put("model", "radixserve-embedded-gpt2")
        .put("max_tokens", 4));
    ArrayNode msgs = turn.putArray("messages");
    msgs.addObject().put("role", "user").put("content", "weather in Oslo?");
    ObjectNode assistant = msgs.addObject().put("role", "assistant");
    assistant.putNull("content");
    assistant.putArray("tool_calls").addObject().put("id", "call_1").put("type", "function")
        .putObject("function").put("name", "get_weather")
        .put("arguments", "{\"city\":\"Oslo\",\"unit\":\"celsius\"}");
    msgs.addObject().put("role", "tool").put("tool_call_id", "call_1").put("content", "12 C");
    assertEquals(4, ok(server, "/v1/chat/completions", turn).at("/usage/completion_tokens").asInt());
  }

  @Test
  void badToolRequestsAre400() {
    ObjectNode unknown = withTools(chat("x", 4));
    unknown.putObject("tool_choice").put("type", "function").putObject("function").put("name", "nope");
    assertEquals(400, post(server, "/v1/chat/completions", unknown).statusCode());
    assertEquals(400, post(server, "/v1/chat/completions",
        chat("x", 4).put("tool_choice", "required")).statusCode());
    ObjectNode badSchema = chat("x", 4).put("tool_choice", "required");
    badSchema.putArray("tools").addObject().put("type", "function").putObject("function")
        .put("name", "f").set("parameters", schema("{'type':'object','if':{}}"));
    HttpResponse<String> r = post(server, "/v1/chat/completions", badSchema);
    assertEquals(400, r.statusCode());
    assertTrue(r.body().contains("if"), r.body());
    ObjectNode both = withTools(chat("x", 4)).put("tool_choice", "required");
    both.putObject("response_format").put("type", "json_object");
    assertEquals(400, post(server, "/v1/chat/completions", both).statusCode());
  }
}
