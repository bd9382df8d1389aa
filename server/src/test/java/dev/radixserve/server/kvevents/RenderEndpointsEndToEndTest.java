package dev.radixserve.server.kvevents;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.radixserve.bench.KvEventDecoder;
import dev.radixserve.server.config.KvEventEncoding;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * vLLM's render endpoints on a real server, as llm-d's picker uses them ({@code token-producer}
 * with a {@code vllm} block posts the client's request, model stamped in): the token ids of a
 * chat request are the ones the server then caches and publishes in its KV events (so the
 * picker's block hashes match the replica's), completions prompts render as {@code /tokenize}
 * tokenizes them, one {@code GenerateRequest} per prompt, and errors come in OpenAI's shape.
 */
class RenderEndpointsEndToEndTest {

  private static final int B = 4;
  private static KvEventsEndToEndTest.Replica replica;

  @BeforeAll
  static void start() {
    replica = KvEventsEndToEndTest.start(KvEventEncoding.ARRAY);
  }

  @AfterAll
  static void stop() {
    replica.follower().close();
    replica.server().shutdown(Duration.ofSeconds(5));
  }

  private static JsonNode post(String path, JsonNode body, int status) throws Exception {
    HttpResponse<String> r = KvEventsEndToEndTest.send(replica.server(), "POST", path,
        body.toString());
    assertEquals(status, r.statusCode(), r.body());
    return KvEventsEndToEndTest.JSON.readTree(r.body());
  }

  private static int[] ids(JsonNode array) {
    int[] out = new int[array.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = array.get(i).asInt();
    }
    return out;
  }

  private static ObjectNode body() {
    return KvEventsEndToEndTest.JSON.createObjectNode().put("model", KvEventsEndToEndTest.MODEL);
  }

  @Test
  void aChatRendersToTheTokensTheReplicaThenCachesAndPublishes() throws Exception {
    ObjectNode chat = body().put("max_tokens", 3).put("temperature", 0);
    chat.putArray("messages").addObject().put("role", "user")
        .put("content", "Route me to the replica that holds this prefix");
    JsonNode rendered = post("/v1/chat/completions/render", chat, 200);
    int[] tokens = ids(rendered.get("token_ids"));
    assertTrue(tokens.length > 3 * B, "a prompt of several blocks: " + tokens.length);
    assertEquals(KvEventsEndToEndTest.MODEL, rendered.get("model").asText());
    assertTrue(rendered.get("request_id").asText().startsWith("chatcmpl-"));
    assertTrue(rendered.get("features").isNull());
    assertEquals(3, rendered.get("sampling_params").get("max_tokens").asInt());
    assertEquals(0.0, rendered.get("sampling_params").get("temperature").asDouble());
    assertTrue(rendered.get("stream_options").isNull(), "not streaming");
    ObjectNode streamed = chat.deepCopy().put("stream", true);
    streamed.putObject("stream_options").put("include_usage", true);
    assertEquals(true, post("/v1/chat/completions/render", streamed, 200)
        .at("/stream_options/include_usage").asBoolean());

    JsonNode done = post("/v1/chat/completions", chat, 200);
    assertEquals(tokens.length, done.get("usage").get("prompt_tokens").asInt());
    KvEventsEndToEndTest.awaitQuiescent(replica.server());
    KvEventsEndToEndTest.awaitDelivered(replica);
    // the chain the replica published, block 0 first: its whole blocks start with the render's
    List<Integer> published = new ArrayList<>();
    for (KvEventDecoder.Event e : List.copyOf(replica.events())) {
      if (e.type().equals("BlockStored")) {
        Arrays.stream(e.tokenIds()).forEach(published::add);
      }
    }
    int whole = tokens.length / B * B;
    assertTrue(published.size() >= whole, published.size() + " published tokens");
    assertArrayEquals(Arrays.copyOf(tokens, whole),
        published.subList(0, whole).stream().mapToInt(Integer::intValue).toArray());
  }

  @Test
  void completionsRenderOneGenerateRequestPerPromptAsTokenizeTokenizes() throws Exception {
    ObjectNode req = body().put("stream", true).put("cache_salt", "tenant-a").put("max_tokens", 8);
    req.putArray("prompt").add("Hello radix world").addArray().add(7).add(8).add(9);
    JsonNode rendered = post("/v1/completions/render", req, 200);
    assertEquals(2, rendered.size());
    JsonNode tokenized = post("/tokenize", body().put("prompt", "Hello radix world"), 200);
    assertArrayEquals(ids(tokenized.get("tokens")), ids(rendered.get(0).get("token_ids")));
    assertArrayEquals(new int[] {7, 8, 9}, ids(rendered.get(1).get("token_ids")));
    for (JsonNode g : rendered) {
      assertTrue(g.get("request_id").asText().startsWith("cmpl-"));
      assertEquals(8, g.get("sampling_params").get("max_tokens").asInt());
      assertTrue(g.get("stream").asBoolean());
      assertTrue(g.get("stream_options").isNull(), "none sent: null, as vLLM answers");
      assertEquals("tenant-a", g.get("cache_salt").asText());
      assertEquals(0, g.get("priority").asInt());
      assertTrue(g.get("kv_transfer_params").isNull());
    }
  }

  @Test
  void badRequestsGetOpenAiErrors() throws Exception {
    JsonNode wrongModel = post("/v1/completions/render",
        body().put("model", "other").put("prompt", "x"), 404);
    assertEquals("model_not_found", wrongModel.get("error").get("code").asText());
    JsonNode noMessages = post("/v1/chat/completions/render", body(), 400);
    assertEquals("invalid_request_error", noMessages.get("error").get("type").asText());
    assertEquals("messages", noMessages.get("error").get("param").asText());
    JsonNode badValue = post("/v1/completions/render",
        body().put("prompt", "x").put("max_tokens", 8).put("temperature", -1), 400);
    assertEquals("temperature", badValue.get("error").get("param").asText());
    JsonNode tooLong = post("/v1/completions/render", body().put("prompt", "x"), 400);
    assertEquals("max_tokens", tooLong.get("error").get("param").asText(),
        "as generation would answer it: the pool cannot hold the default max_tokens");
    assertEquals(405, KvEventsEndToEndTest.send(replica.server(), "GET",
        "/v1/chat/completions/render", null).statusCode());
  }
}
