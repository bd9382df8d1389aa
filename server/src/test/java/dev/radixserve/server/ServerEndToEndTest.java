package dev.radixserve.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.radixserve.server.config.ServerConfig;
import dev.radixserve.server.engine.EngineSnapshot;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The real embedded model through ONNX Runtime behind the real HTTP server. */
class ServerEndToEndTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static RadixServer server;
  private static final HttpClient CLIENT = HttpClient.newHttpClient();

  @BeforeAll
  static void start() {
    ServerConfig.Builder b = LocalServers.builder(256);
    server = RadixServer.start(b.build());
  }

  @AfterAll
  static void stop() {
    server.shutdown(Duration.ofSeconds(5));
  }

  static HttpResponse<String> post(String path, String body) throws Exception {
    return CLIENT.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
        .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
  }

  static HttpResponse<String> get(String path) throws Exception {
    return CLIENT.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
        .GET().build(), HttpResponse.BodyHandlers.ofString());
  }

  static JsonNode completion(String prompt, int maxTokens, String extra) throws Exception {
    HttpResponse<String> r = post("/v1/completions", "{\"model\":\"radixserve-embedded-gpt2\",\"prompt\":" + JSON.writeValueAsString(prompt)
        + ",\"max_tokens\":" + maxTokens + ",\"temperature\":0" + extra + "}");
    assertEquals(200, r.statusCode(), r.body());
    return JSON.readTree(r.body());
  }

  static String streamedText(String prompt, int maxTokens) throws Exception {
    HttpResponse<String> r = post("/v1/completions", "{\"model\":\"radixserve-embedded-gpt2\",\"prompt\":" + JSON.writeValueAsString(prompt)
        + ",\"max_tokens\":" + maxTokens + ",\"temperature\":0,\"stream\":true,"
        + "\"stream_options\":{\"include_usage\":true}}");
    assertEquals(200, r.statusCode(), r.body());
    StringBuilder text = new StringBuilder();
    List<String> events = new ArrayList<>();
    for (String line : r.body().split("\n\n")) {
      assertTrue(line.startsWith("data: "), line);
      events.add(line.substring(6));
    }
    assertEquals("[DONE]", events.getLast());
    JsonNode usage = JSON.readTree(events.get(events.size() - 2));
    assertEquals(0, usage.get("choices").size());
    assertEquals(maxTokens, usage.at("/usage/completion_tokens").asInt());
    for (String e : events.subList(0, events.size() - 2)) {
      text.append(JSON.readTree(e).at("/choices/0/text").asText());
    }
    return text.toString();
  }

  @Test
  void completionStreamedEqualsNonStreamed() throws Exception {
    JsonNode r = completion("Hello world, this is a test", 12, "");
    assertEquals(12, r.at("/usage/completion_tokens").asInt());
    assertEquals("length", r.at("/choices/0/finish_reason").asText());
    assertTrue(r.at("/usage/prompt_tokens_details/cached_tokens").isInt());
    assertEquals(r.at("/choices/0/text").asText(), streamedText("Hello world, this is a test", 12));
  }

  @Test
  void samePromptTwiceHitsTheCache() throws Exception {
    String prompt = "The quick brown fox jumps over the lazy dog. ".repeat(10);
    JsonNode first = completion(prompt, 4, ",\"cache_salt\":\"twice\"");
    JsonNode second = completion(prompt, 4, ",\"cache_salt\":\"twice\"");
    assertEquals(0, first.at("/usage/prompt_tokens_details/cached_tokens").asInt());
    int cached = second.at("/usage/prompt_tokens_details/cached_tokens").asInt();
    int promptTokens = second.at("/usage/prompt_tokens").asInt();
    assertEquals(promptTokens - 1, cached); // to the token: only the last one is computed
    assertEquals(first.at("/choices/0/text").asText(), second.at("/choices/0/text").asText());
    // a prompt (token ids) that leaves the cached one inside its 3rd block reuses exactly the
    // shared tokens: 37 of them
    int[] ids = JSON.convertValue(JSON.readTree(post("/tokenize",
        "{\"model\":\"radixserve-embedded-gpt2\",\"prompt\":" + JSON.writeValueAsString(prompt)
            + "}").body()).get("tokens"), int[].class);
    int[] branch = java.util.Arrays.copyOf(ids, 45);
    java.util.Arrays.fill(branch, 37, 45, 50);
    JsonNode third = JSON.readTree(post("/v1/completions",
        "{\"model\":\"radixserve-embedded-gpt2\",\"prompt\":" + JSON.writeValueAsString(branch)
            + ",\"max_tokens\":2,\"cache_salt\":\"twice\"}").body());
    assertEquals(37, third.at("/usage/prompt_tokens_details/cached_tokens").asInt(),
        third.toString());
    String metrics = get("/metrics").body();
    assertTrue(metrics.contains("radixserve_prefix_cache_hit_tokens_total"), metrics);
    for (String name : List.of("radixserve_requests_running ", "radixserve_requests_waiting ",
        "radixserve_kv_cache_usage_ratio ", "radixserve_kv_cache_blocks_total ",
        "radixserve_kv_cache_blocks_free ", "radixserve_kv_cache_blocks_cached ",
        "radixserve_prefix_cache_queried_tokens_total ", "radixserve_prefix_cache_hit_rate ",
        "radixserve_prompt_tokens_computed_total ", "radixserve_prompt_tokens_cached_total ",
        "radixserve_generation_tokens_total ", "radixserve_time_to_first_token_seconds_bucket{",
        "radixserve_inter_token_latency_seconds_count ", "radixserve_e2e_request_latency_seconds_sum ",
        "radixserve_request_queue_time_seconds_bucket{", "radixserve_preemptions_total ",
        "radixserve_evicted_blocks_total ", "radixserve_requests_finished_total{finish_reason=\"length\"",
        "radixserve_http_responses_total{status=\"200\"", "jvm_memory_used_bytes")) {
      assertTrue(metrics.contains("\n" + name), name + " missing in\n" + metrics);
    }
  }

  @Test
  void concurrentClientsGetWhatTheyGetAlone() throws Exception {
    List<String> prompts = new ArrayList<>();
    List<String> alone = new ArrayList<>();
    for (int i = 0; i < 32; i++) {
      prompts.add("Client number " + i + " asks a question about radix trees");
      alone.add(completion(prompts.get(i), 6, ",\"cache_salt\":\"alone\"").at("/choices/0/text")
          .asText());
    }
    List<CompletableFuture<String>> together = new ArrayList<>();
    for (String p : prompts) {
      together.add(CompletableFuture.supplyAsync(() -> {
        try {
          return streamedText(p, 6);
        } catch (Exception e) {
          throw new RuntimeException(e);
        }
      }));
    }
    for (int i = 0; i < 32; i++) {
      assertEquals(alone.get(i), together.get(i).join(), "client " + i);
    }
    assertQuiescent();
  }

  @Test
  void chatAndNChoicesAndStops() throws Exception {
    HttpResponse<String> r = post("/v1/chat/completions", "{\"model\":\"radixserve-embedded-gpt2\",\"messages\":[{\"role\":\"user\","
        + "\"content\":\"hi\"}],\"max_completion_tokens\":5,\"temperature\":0,\"n\":3,"
        + "\"logprobs\":true,\"top_logprobs\":2}");
    assertEquals(200, r.statusCode(), r.body());
    JsonNode j = JSON.readTree(r.body());
    assertEquals(3, j.get("choices").size());
    String first = j.at("/choices/0/message/content").asText();
    for (JsonNode c : j.get("choices")) {
      assertEquals(first, c.at("/message/content").asText()); // greedy: all choices equal
      assertEquals(2, c.at("/logprobs/content/0/top_logprobs").size());
    }
    assertEquals(15, j.at("/usage/completion_tokens").asInt());
    assertQuiescent();
  }

  @Test
  void errorsThenAGoodRequest() throws Exception {
    assertEquals(400, post("/v1/completions", "{bad json").statusCode());
    assertEquals(400, post("/v1/completions", "{\"model\":\"radixserve-embedded-gpt2\",\"prompt\":\"x\",\"temperature\":\"hot\"}").statusCode());
    assertEquals(400, post("/v1/completions", "{\"model\":\"radixserve-embedded-gpt2\",\"prompt\":\"x\",\"max_tokens\":5000}").statusCode());
    assertEquals(400, post("/v1/completions",
        "{\"model\":\"radixserve-embedded-gpt2\",\"prompt\":\"x\",\"stream_options\":{\"bogus\":1}}").statusCode());
    assertEquals(404, post("/v1/completions", "{\"prompt\":\"x\",\"model\":\"nope\"}").statusCode());
    assertEquals(404, get("/nowhere").statusCode());
    assertEquals(405, get("/v1/completions").statusCode());
    HttpResponse<String> bad = post("/v1/completions", "{\"model\":\"radixserve-embedded-gpt2\",\"prompt\":\"x\",\"top_p\":0}");
    assertEquals(400, bad.statusCode());
    assertEquals("top_p", JSON.readTree(bad.body()).at("/error/param").asText());
    assertEquals(200, get("/health").statusCode());
    assertEquals(5, completion("still works", 5, "").at("/usage/completion_tokens").asInt());
  }

  @Test
  void chatStreamCarriesRoleThenContentAndMatchesNonStreamed() throws Exception {
    String msgs = "\"model\":\"radixserve-embedded-gpt2\",\"messages\":[{\"role\":\"system\",\"content\":\"be brief\"},"
        + "{\"role\":\"user\",\"content\":\"hello\"}],\"max_tokens\":6,\"temperature\":0";
    JsonNode whole = JSON.readTree(post("/v1/chat/completions", "{" + msgs + "}").body());
    HttpResponse<String> r = post("/v1/chat/completions", "{" + msgs + ",\"stream\":true}");
    assertEquals(200, r.statusCode());
    List<String> events = List.of(r.body().split("\n\n"));
    assertEquals("data: [DONE]", events.getLast());
    JsonNode first = JSON.readTree(events.getFirst().substring(6));
    assertEquals("assistant", first.at("/choices/0/delta/role").asText());
    StringBuilder text = new StringBuilder();
    for (String e : events.subList(1, events.size() - 1)) {
      text.append(JSON.readTree(e.substring(6)).at("/choices/0/delta/content").asText(""));
    }
    assertEquals(whole.at("/choices/0/message/content").asText(), text.toString());
    assertEquals(400, post("/v1/chat/completions",
        "{\"model\":\"radixserve-embedded-gpt2\",\"messages\":[{\"role\":\"user\",\"content\":\"x\",\"extra\":1}]}").statusCode());
  }

  @Test
  void severalPromptsGiveIndexOrderedChoices() throws Exception {
    HttpResponse<String> r = post("/v1/completions",
        "{\"model\":\"radixserve-embedded-gpt2\",\"prompt\":[\"one\",[464, 2068]],\"max_tokens\":3,\"temperature\":0,\"n\":2}");
    assertEquals(200, r.statusCode(), r.body());
    JsonNode j = JSON.readTree(r.body());
    assertEquals(4, j.get("choices").size());
    for (int i = 0; i < 4; i++) {
      assertEquals(i, j.at("/choices/" + i + "/index").asInt());
    }
    assertEquals(completion("one", 3, "").at("/choices/0/text").asText(),
        j.at("/choices/1/text").asText());
    assertEquals(12, j.at("/usage/completion_tokens").asInt());
    assertEquals(3, j.at("/usage/prompt_tokens").asInt()); // "one" is 1 token, [464, 2068] is 2
  }

  private static void assertQuiescent() {
    EngineSnapshot s = server.inspect();
    assertNull(s.integrityError());
    assertTrue(s.quiescent(), s.toString());
  }
}
