package dev.radixserve.server;

import static dev.radixserve.server.LocalServers.metric;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.radixserve.server.config.ServerConfig;
import dev.radixserve.server.engine.EngineSnapshot;
import dev.radixserve.server.spec.SpeculativeMode;
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
import java.util.function.Function;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Speculative decoding through the real model (checkpoints transformers wrote and checked) and
 * the real HTTP server: greedy outputs, token for token with their logprobs' tokens, are those
 * of the server without speculation, with the prefix cache off, on (a second round drafts from
 * the cache's token runs), and in a pool so small that sequences are preempted; so are outputs
 * under a JSON schema (a draft token the constraint forbids is never accepted) and outputs cut
 * by stop strings, and seeded sampled outputs (the sampler draws in the same order). Drafts were
 * verified and some accepted in every speculative run, and the pool is whole after each.
 */
class SpeculativeServingTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient CLIENT = HttpClient.newHttpClient();

  @ParameterizedTest
  @ValueSource(strings = {"qwen2-window", "llama-llama3"})
  void sameOutputsWithSpeculationCachedOffOnAndPreempted(String name) throws Exception {
    Path dir = fixture(name);
    List<ObjectNode> requests = requests(dir, name);

    List<String> expected = outputs(run(dir, name, SpeculativeMode.OFF, false, 256, requests));
    for (boolean caching : new boolean[] {false, true}) {
      // cached: the default, auto, which drafts on the CPU (run() checks that drafts were made)
      SpeculativeMode mode = caching ? SpeculativeMode.AUTO : SpeculativeMode.NGRAM;
      assertEquals(expected, outputs(run(dir, name, mode, caching, 256, requests)), "cache "
          + caching);
    }
    assertEquals(expected, outputs(run(dir, name, SpeculativeMode.NGRAM, true, 20, requests)),
        "preempted");
  }

  /**
   * Greedy prompts that repeat themselves (drafts from the prompt pay), one under a JSON schema,
   * one with a stop string its plain output contains, and two sampled with a seed.
   */
  private static List<ObjectNode> requests(Path dir, String name) throws Exception {
    JsonNode expected = JSON.readTree(dir.resolve("expected.json").toFile());
    List<ObjectNode> out = new ArrayList<>();
    List<String> texts = new ArrayList<>();
    for (JsonNode t : expected.get("texts")) {
      texts.add(t.get("text").asText());
    }
    // the fixtures' models see 64 positions: prompts of at most 16 tokens (at most a token a
    // character), 40 tokens of output
    for (int i = 0; i < 4; i++) {
      String t = head(texts.get(i % texts.size()), 6);
      out.add(body(name, t + t + t.substring(0, 3), 40));
    }
    ObjectNode schema = body(name, "A record: ", 40);
    ObjectNode s = schema.putObject("response_format").put("type", "json_schema")
        .putObject("json_schema");
    s.put("name", "record").put("strict", true);
    ObjectNode props = s.putObject("schema").put("type", "object").putObject("properties");
    props.putObject("name").put("type", "string");
    props.putObject("tags").put("type", "array").putObject("items").put("type", "string");
    out.add(schema);
    ObjectNode stop = body(name, head(texts.get(1), 6) + " " + head(texts.get(1), 6), 40);
    stop.putArray("stop").add("o");
    out.add(stop);
    for (long seed : new long[] {7, 8}) {
      ObjectNode sampled = body(name, head(texts.get(2), 6) + head(texts.get(2), 6), 40);
      sampled.put("temperature", 0.8).put("seed", seed);
      out.add(sampled);
    }
    return out;
  }

  private static String head(String text, int chars) {
    return text.substring(0, Math.min(chars, text.length()));
  }

  private static ObjectNode body(String name, String prompt, int maxTokens) {
    ObjectNode b = JSON.createObjectNode();
    b.put("model", name).put("prompt", prompt).put("max_tokens", maxTokens)
        .put("temperature", 0).put("ignore_eos", true).put("logprobs", 1);
    return b;
  }

  private static Path fixture(String name) {
    Path dir = Path.of("..", "model-runtime", "src", "test", "resources",
        "transformers-checkpoints", name);
    assertTrue(Files.isDirectory(dir), dir.toAbsolutePath().toString());
    return dir;
  }

  /**
   * The requests three at a time (drafting stops above four running sequences) on a server of
   * {@code blocks} 4-token blocks; with the cache on a second round too, which must give the same
   * outputs. Checks the pool is whole after; with speculation on, that drafts were verified and
   * some accepted; with a small pool, that sequences were preempted.
   */
  private static List<JsonNode> run(Path dir, String name, SpeculativeMode mode, boolean caching,
      int blocks, List<ObjectNode> requests) throws Exception {
    ServerConfig.Builder b = LocalServers.builder(blocks);
    b.model = dir;
    b.servedModelName = name;
    b.blockSize = 4;
    b.maxNumBatchedTokens = 32;
    b.prefixCaching = caching;
    b.speculative = mode;
    b.speculativeMaxTokens = 5;
    // the acceptance alone sets draft lengths, so some drafts are rejected whatever the speed
    b.speculativePriced = false;
    RadixServer s = RadixServer.start(b.build());
    try {
      List<JsonNode> first = inThrees(s, requests);
      if (caching) {
        assertEquals(outputs(first), outputs(inThrees(s, requests)), "second round");
      }
      EngineSnapshot snap = s.inspect();
      assertNull(snap.integrityError());
      assertTrue(snap.quiescent(), snap.toString());
      if (blocks < 64) {
        assertTrue(metric(s, "radixserve_preemptions_total") > 0, "no preemption");
      }
      if (mode != SpeculativeMode.OFF) {
        double drafted = metric(s, "radixserve_spec_draft_tokens_total{position=\"1\"");
        double accepted = metric(s, "radixserve_spec_accepted_tokens_total{position=\"1\"");
        assertTrue(accepted > 0 && drafted > accepted,
            "drafted " + drafted + ", accepted " + accepted);
      }
      return first;
    } finally {
      s.shutdown(Duration.ofSeconds(5));
    }
  }

  private static List<JsonNode> inThrees(RadixServer s, List<ObjectNode> requests) {
    List<JsonNode> out = new ArrayList<>();
    for (int i = 0; i < requests.size(); i += 3) {
      List<CompletableFuture<JsonNode>> fs = new ArrayList<>();
      for (ObjectNode r : requests.subList(i, Math.min(requests.size(), i + 3))) {
        fs.add(CompletableFuture.supplyAsync(() -> complete(s, r)));
      }
      fs.forEach(f -> out.add(f.join()));
    }
    return out;
  }

  private static JsonNode complete(RadixServer s, ObjectNode body) {
    try {
      HttpResponse<String> r = CLIENT.send(HttpRequest.newBuilder(
              URI.create("http://127.0.0.1:" + s.port() + "/v1/completions"))
          .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body))).build(),
          HttpResponse.BodyHandlers.ofString());
      assertEquals(200, r.statusCode(), r.body());
      return JSON.readTree(r.body());
    } catch (Exception e) {
      throw new RuntimeException(e);
    }
  }

  /** Text, tokens, finish reason and completion tokens of each response. */
  private static List<String> outputs(List<JsonNode> responses) {
    Function<JsonNode, String> one = r -> r.at("/choices/0/text").asText() + " | "
        + r.at("/choices/0/logprobs/tokens") + " | " + r.at("/choices/0/finish_reason").asText()
        + " | " + r.at("/usage/completion_tokens").asInt();
    return responses.stream().map(one).toList();
  }
}
