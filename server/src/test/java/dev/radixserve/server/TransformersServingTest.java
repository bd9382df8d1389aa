package dev.radixserve.server;

import static dev.radixserve.server.LocalServers.metric;
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
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Checkpoints that transformers wrote (model-runtime's {@code transformers-checkpoints}) whose
 * attention depends on where a token is: sliding windows (Mistral with a window of 8 on every
 * layer, Qwen2 with 6 from layer 1, Phi-3 with 7) and Phi-3's longrope past its original length
 * (a prompt longer than it runs in the long context, a shorter one switches at that position),
 * served over HTTP with prompts and outputs several windows long, in 4-token blocks: the first
 * greedy steps carry transformers' logprobs; and the outputs of eight concurrent requests that
 * share a prefix are the same with the prefix cache off, on (a second round from the cache), and
 * under a pool so small that sequences are preempted and recomputed.
 */
class TransformersServingTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient CLIENT = HttpClient.newHttpClient();
  private static final int MAX_TOKENS = 24;

  @ParameterizedTest
  @ValueSource(strings = {"mistral-window", "qwen2-window", "phi3-window", "phi3-longrope-long"})
  void servedAsTransformersCachedOffOnAndPreempted(String name) throws Exception {
    Path dir = fixture(name);
    JsonNode expected = JSON.readTree(dir.resolve("expected.json").toFile());
    List<String> prompts = new ArrayList<>();
    for (JsonNode run : expected.get("runs")) {
      prompts.add(run.get("prompt").asText());
    }
    for (int i = 0; prompts.size() < 8; i++) {
      prompts.add(prompts.get(i % 2) + " again " + i);
    }

    List<JsonNode> off = run(start(dir, name, false, 256), name, prompts, false, false);
    for (int r = 0; r < expected.get("runs").size(); r++) {
      JsonNode steps = expected.get("runs").get(r).get("steps");
      JsonNode lp = off.get(r).at("/choices/0/logprobs/token_logprobs");
      for (int i = 0; i < steps.size(); i++) {
        // the fixtures' top-2 gaps are all above 5e-3: no near-tie to allow
        assertEquals(steps.get(i).get("top_logprobs").get(0).asDouble(), lp.get(i).asDouble(),
            1e-4, name + " prompt " + r + " step " + i);
      }
    }
    List<String> texts = texts(off);
    assertEquals(texts, texts(run(start(dir, name, true, 256), name, prompts, true, false)));
    assertEquals(texts, texts(run(start(dir, name, true, 24), name, prompts, false, true)));
  }

  /**
   * A long-context prompt never reuses the usual context's blocks (its keys are rotated with the
   * long factors), though its tokens extend a cached prompt; its own repeat reuses its own.
   */
  @org.junit.jupiter.api.Test
  void longContextPromptsHaveTheirOwnCache() throws Exception {
    String name = "phi3-longrope-long";
    RadixServer s = start(fixture(name), name, true, 256);
    try {
      String prompt = "Hello world";
      String longer = prompt + " again";
      assertTrue(complete(s, name, prompt).at("/usage/prompt_tokens").asInt() <= 12);
      JsonNode first = complete(s, name, longer);
      assertTrue(first.at("/usage/prompt_tokens").asInt() > 12, first.toString());
      assertEquals(0, first.at("/usage/prompt_tokens_details/cached_tokens").asInt());
      assertTrue(complete(s, name, longer)
          .at("/usage/prompt_tokens_details/cached_tokens").asInt() >= 12);
      assertTrue(complete(s, name, prompt)
          .at("/usage/prompt_tokens_details/cached_tokens").asInt() > 0);
    } finally {
      s.shutdown(Duration.ofSeconds(5));
    }
  }

  private static Path fixture(String name) {
    Path dir = Path.of("..", "model-runtime", "src", "test", "resources",
        "transformers-checkpoints", name);
    assertTrue(Files.isDirectory(dir), dir.toAbsolutePath().toString());
    return dir;
  }

  private static RadixServer start(Path dir, String name, boolean caching, int blocks) {
    ServerConfig.Builder b = LocalServers.builder(blocks);
    b.model = dir;
    b.servedModelName = name;
    b.blockSize = 4;
    b.maxNumBatchedTokens = 16;
    b.prefixCaching = caching;
    return RadixServer.start(b.build());
  }

  /**
   * The prompts as concurrent requests (a second round too when {@code twice}, which must reuse
   * cached blocks); checks the pool is whole afterwards, and that it preempted when it should.
   */
  private static List<JsonNode> run(RadixServer s, String name, List<String> prompts,
      boolean twice, boolean preempts) throws Exception {
    try {
      List<JsonNode> first = concurrently(s, name, prompts);
      if (twice) {
        List<JsonNode> second = concurrently(s, name, prompts);
        int cached = second.stream()
            .mapToInt(r -> r.at("/usage/prompt_tokens_details/cached_tokens").asInt()).sum();
        assertTrue(cached > 0, "second round reused nothing");
        assertEquals(texts(first), texts(second));
      }
      EngineSnapshot snap = s.inspect();
      assertNull(snap.integrityError());
      assertTrue(snap.quiescent(), snap.toString());
      if (preempts) {
        assertTrue(metric(s, "radixserve_preemptions_total") > 0, "no preemption");
      }
      return first;
    } finally {
      s.shutdown(Duration.ofSeconds(5));
    }
  }

  private static List<JsonNode> concurrently(RadixServer s, String name, List<String> prompts) {
    List<CompletableFuture<JsonNode>> fs = new ArrayList<>();
    for (String p : prompts) {
      fs.add(CompletableFuture.supplyAsync(() -> complete(s, name, p)));
    }
    return fs.stream().map(CompletableFuture::join).toList();
  }

  private static JsonNode complete(RadixServer s, String name, String prompt) {
    try {
      HttpResponse<String> r = CLIENT.send(HttpRequest.newBuilder(
              URI.create("http://127.0.0.1:" + s.port() + "/v1/completions"))
          .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"" + name + "\",\"prompt\":"
              + JSON.writeValueAsString(prompt) + ",\"max_tokens\":" + MAX_TOKENS
              + ",\"temperature\":0,\"ignore_eos\":true,\"logprobs\":1}")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertEquals(200, r.statusCode(), r.body());
      return JSON.readTree(r.body());
    } catch (Exception e) {
      throw new RuntimeException(e);
    }
  }

  private static List<String> texts(List<JsonNode> responses) {
    return responses.stream().map(r -> r.at("/choices/0/text").asText()).toList();
  }
}
