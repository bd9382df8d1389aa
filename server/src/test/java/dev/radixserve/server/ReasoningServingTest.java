package dev.radixserve.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.radixserve.server.RawHttp.Response;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Reasoning models end to end: tiny Qwen3 and DeepSeek-R1-distill checkpoints written by
 * transformers with the families' real chat templates ({@code transformers-checkpoints/
 * qwen3-think}, {@code r1-distill}, {@code make_reasoning_fixtures.py}). For each request there
 * (thinking, not thinking by {@code chat_template_kwargs}, cut by {@code max_tokens}, a history
 * sent back with its reasoning), the server renders the template to transformers' tokens, greedy
 * under the same {@code logit_bias} and {@code allowed_token_ids} gives transformers' reply, and
 * {@code reasoning_content} / {@code content} are vLLM's parser's split of that text, whole and
 * streamed; {@code reasoning_tokens} count the reasoning and its tags. Then structured outputs
 * after the reasoning, and the next turn reusing the cached prompt.
 */
class ReasoningServingTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Path CHECKPOINTS = Path.of("..", "model-runtime", "src", "test",
      "resources", "transformers-checkpoints");

  private static Response post(RadixServer server, ObjectNode body) throws Exception {
    return RawHttp.exchange(server.port(), RawHttp.post("/v1/chat/completions",
        JSON.writeValueAsString(body), "Connection: close")).getFirst();
  }

  private static ObjectNode request(String model, JsonNode run) {
    ObjectNode b = JSON.createObjectNode();
    b.put("model", model).put("temperature", 0).put("max_tokens", run.get("max_tokens").asInt());
    b.set("messages", run.get("messages"));
    if (!run.get("chat_template_kwargs").isEmpty()) {
      b.set("chat_template_kwargs", run.get("chat_template_kwargs"));
    }
    b.set("logit_bias", run.get("logit_bias"));
    b.set("allowed_token_ids", run.get("allowed_token_ids"));
    b.set("repetition_penalty", run.get("repetition_penalty"));
    return b;
  }

  private static int tokenId(RadixServer server, String text) {
    Response r = RawHttp.exchange(server.port(), RawHttp.post("/tokenize",
        "{\"prompt\":\"" + text + "\"}", "Connection: close")).getFirst();
    assertEquals(1, r.json().get("count").asInt(), r.text());
    return r.json().at("/tokens/0").asInt();
  }

  /** Tokens of the reasoning part: up to and including the one that closed it. */
  private static int reasoningTokens(JsonNode run, int close) {
    List<Integer> tokens = new ArrayList<>();
    run.get("tokens").forEach(t -> tokens.add(t.asInt()));
    if (run.get("reasoning").isNull()) {
      return 0;
    }
    int at = tokens.indexOf(close);
    return at >= 0 ? at + 1 : tokens.size() + ("stop".equals(run.get("finish_reason").asText())
        ? 1 : 0);
  }

  @Test
  void qwen3() throws Exception {
    serve("qwen3-think");
  }

  @Test
  void r1Distill() throws Exception {
    serve("r1-distill");
  }

  private void serve(String name) throws Exception {
    Path dir = CHECKPOINTS.resolve(name);
    JsonNode fixture = JSON.readTree(dir.resolve("reasoning.json").toFile());
    RadixServer server = LocalServers.startCheckpoint(dir, name);
    try {
      int close = tokenId(server, "</think>");
      for (JsonNode run : fixture.get("runs")) {
        String label = name + " " + run.get("label").asText() + ": " + run.get("text");
        ObjectNode body = request(name, run);
        Response r = post(server, body);
        assertEquals(200, r.status(), r.text());
        JsonNode j = r.json();
        assertEquals(run.get("prompt_ids").size(), j.at("/usage/prompt_tokens").asInt(), label);
        JsonNode m = j.at("/choices/0/message");
        assertEquals(run.get("reasoning"), m.get("reasoning_content"), label + " " + j);
        assertEquals(run.get("content"), m.get("content"), label + " " + j);
        assertEquals(run.get("finish_reason").asText(), j.at("/choices/0/finish_reason").asText());
        int completion = run.get("tokens").size()
            + ("stop".equals(run.get("finish_reason").asText()) ? 1 : 0);
        assertEquals(completion, j.at("/usage/completion_tokens").asInt(), label);
        int reasoningTokens = reasoningTokens(run, close);
        assertEquals(reasoningTokens,
            j.at("/usage/completion_tokens_details/reasoning_tokens").asInt(), label);

        body.put("stream", true).putObject("stream_options").put("include_usage", true);
        Response s = post(server, body);
        assertEquals(200, s.status(), s.text());
        StringBuilder reasoning = new StringBuilder();
        StringBuilder content = new StringBuilder();
        boolean anyReasoning = false;
        JsonNode usage = null;
        for (String line : s.text().split("\n")) {
          if (!line.startsWith("data: {")) {
            continue;
          }
          JsonNode e = JSON.readTree(line.substring(6));
          if (e.hasNonNull("usage")) {
            usage = e.get("usage");
          }
          JsonNode d = e.at("/choices/0/delta");
          if (d.hasNonNull("reasoning_content")) {
            anyReasoning = true;
            reasoning.append(d.get("reasoning_content").asText());
          }
          if (d.hasNonNull("content")) {
            content.append(d.get("content").asText());
          }
        }
        assertEquals(run.get("reasoning").asText(""), reasoning.toString(), label + " streamed");
        assertEquals(run.get("content").asText(""), content.toString(), label + " streamed");
        assertTrue(anyReasoning || run.get("reasoning").asText("").isEmpty(), label);
        assertEquals(reasoningTokens,
            usage.at("/completion_tokens_details/reasoning_tokens").asInt(), label);
      }
      thinkThenAnswerUnderASchema(server, name, fixture);
      nextTurnReusesThePrompt(server, name, fixture);
    } finally {
      server.shutdown(Duration.ofSeconds(5));
    }
  }

  /**
   * The thinking request with a JSON schema: the reply still thinks first (the mask starts at
   * {@code </think>}), and its content is valid under the schema.
   */
  private void thinkThenAnswerUnderASchema(RadixServer server, String name, JsonNode fixture)
      throws Exception {
    JsonNode thinking = fixture.get("runs").get(0);
    ObjectNode body = request(name, thinking);
    var allowed = (com.fasterxml.jackson.databind.node.ArrayNode) body.get("allowed_token_ids");
    for (String c : new String[] {"{", "}", "\\\"", ":"}) {
      allowed.add(tokenId(server, c));
    }
    body.put("max_tokens", 40);
    body.set("response_format", JSON.readTree("{\"type\":\"json_schema\",\"json_schema\":{"
        + "\"name\":\"a\",\"schema\":{\"type\":\"object\",\"properties\":{\"ok\":"
        + "{\"type\":\"boolean\"}},\"required\":[\"ok\"]}}}"));
    Response r = post(server, body);
    assertEquals(200, r.status(), r.text());
    JsonNode m = r.json().at("/choices/0/message");
    assertTrue(m.hasNonNull("reasoning_content"), r.text());
    assertEquals("stop", r.json().at("/choices/0/finish_reason").asText(), r.text());
    JsonNode answer = JSON.readTree(m.get("content").asText());
    assertTrue(answer.get("ok").isBoolean(), r.text());
    assertEquals(1, answer.size(), r.text());
  }

  /**
   * The next turn sends the reply back with its reasoning; the template renders the history as
   * it wants (Qwen3's and the distill's drop earlier reasoning), and the new prompt reuses the
   * cached blocks of everything they share with the first turn's prompt and reply.
   */
  private void nextTurnReusesThePrompt(RadixServer server, String name, JsonNode fixture)
      throws Exception {
    JsonNode first = fixture.get("runs").get(0);
    Response r1 = post(server, request(name, first));
    JsonNode m = r1.json().at("/choices/0/message");
    ObjectNode body = request(name, first);
    var messages = body.putArray("messages");
    first.get("messages").forEach(messages::add);
    ObjectNode reply = messages.addObject();
    reply.put("role", "assistant").put("content", m.get("content").asText());
    reply.put("reasoning_content", m.get("reasoning_content").asText());
    messages.addObject().put("role", "user").put("content", "And 3+3?");
    Response r2 = post(server, body);
    assertEquals(200, r2.status(), r2.text());
    int cached = r2.json().at("/usage/prompt_tokens_details/cached_tokens").asInt();
    String prompt = first.get("prompt").asText();
    // what the new prompt shares with the first turn: the first prompt up to the reply's start
    // (Qwen3: all of it; the distill: less its generation prompt's "<think>\n")
    int shared = name.startsWith("r1") ? first.get("prompt_ids").size() - 2
        : first.get("prompt_ids").size();
    assertEquals(shared, cached, name + ": " + prompt + " / " + r2.text());
  }
}
