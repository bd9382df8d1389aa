package dev.radixserve.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.radixserve.model.ModelConfig;
import dev.radixserve.model.weights.DType;
import dev.radixserve.model.weights.GptWeights;
import dev.radixserve.model.weights.HfModelWriter;
import dev.radixserve.model.weights.RandomGpt2;
import dev.radixserve.server.config.ServerConfig;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The disk tier across new weights of the same shape under the same name (two random GPT-2s of
 * one config, each in a directory called {@code model}): the second never loads the first's
 * blocks, which would give the first model's KV to the second; the first, restarted, still
 * loads its own (so the directory did hold reusable blocks). {@code /v1/models} tells them apart.
 */
class WeightsDigestTierTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient CLIENT = HttpClient.newHttpClient();
  private static final String NAME = "model";
  private static final String PROMPT = TierRestartTest.PROMPT;

  @TempDir
  static Path root;

  private static Path first;
  private static Path second;

  @BeforeAll
  static void writeCheckpoints() {
    first = root.resolve("a").resolve(NAME);
    second = root.resolve("b").resolve(NAME);
    try (GptWeights a = RandomGpt2.create(ModelConfig.embeddedDefault(), 1);
        GptWeights b = RandomGpt2.create(ModelConfig.embeddedDefault(), 2)) {
      HfModelWriter.write(a, first, DType.F32);
      HfModelWriter.write(b, second, DType.F32);
    }
  }

  private static RadixServer start(Path model, boolean caching, Path tierDir) {
    ServerConfig.Builder b = LocalServers.builder(64);
    b.model = model;
    b.servedModelName = NAME;
    b.prefixCaching = caching;
    b.warmup = false;
    b.kvOffloadDir = tierDir;
    return RadixServer.start(b.build());
  }

  private static JsonNode get(RadixServer s, String path, String body) throws Exception {
    HttpRequest.Builder r = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + s.port() + path));
    HttpResponse<String> response = CLIENT.send(body == null ? r.build()
        : r.POST(HttpRequest.BodyPublishers.ofString(body)).build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(200, response.statusCode(), response.body());
    return JSON.readTree(response.body());
  }

  /** {text, cached tokens, weights digest} of one greedy completion on a fresh server. */
  private static String[] once(Path model, boolean caching, Path tierDir) throws Exception {
    RadixServer s = start(model, caching, tierDir);
    try {
      JsonNode c = get(s, "/v1/completions", "{\"model\":\"" + NAME + "\",\"prompt\":"
          + JSON.writeValueAsString(PROMPT) + ",\"max_tokens\":8,\"temperature\":0,"
          + "\"ignore_eos\":true}");
      return new String[] {c.at("/choices/0/text").asText(),
          c.at("/usage/prompt_tokens_details/cached_tokens").asText(),
          get(s, "/v1/models", null).at("/data/0/weights_digest").asText()};
    } finally {
      s.shutdown(Duration.ofSeconds(5)); // with a tier directory: writes the cached blocks
    }
  }

  @Test
  void otherWeightsUnderTheSameNameDoNotLoadTheOldBlocks(@TempDir Path tiers) throws Exception {
    String secondText = once(second, false, null)[0];
    String[] a = once(first, true, tiers);
    assertEquals("0", a[1]);
    String[] again = once(first, true, tiers);
    assertEquals(a[2], again[2], "the same files, the same digest");
    assertTrue(Integer.parseInt(again[1]) >= 12 * 16, "its own blocks: cached " + again[1]);
    assertEquals(a[0], again[0]);

    String[] b = once(second, true, tiers);
    assertNotEquals(a[2], b[2], "/v1/models gives each checkpoint its own digest");
    assertEquals("0", b[1], "the second weights must not load the first weights' blocks");
    assertEquals(secondText, b[0]);
  }
}
