package dev.radixserve.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.radixserve.model.tokenizer.HfTokenizer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The Gemma checkpoints transformers wrote (model-runtime's {@code gemma/} fixtures) served over
 * HTTP through the real server: a greedy completion's 12 tokens and their logprobs are
 * transformers' ({@code expected.json}), with the 55-token prompt prefilled in chunks of 16 over
 * sliding windows of 8; and again with the prompt's keys from the prefix cache.
 */
class GemmaServingTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient CLIENT = HttpClient.newHttpClient();

  @ParameterizedTest
  @ValueSource(strings = {"gemma2", "gemma3"})
  void greedyCompletionIsTransformersCachedOrNot(String name) throws Exception {
    Path fixture = Path.of("..", "model-runtime", "src", "test", "resources", "gemma", name);
    assertTrue(Files.isDirectory(fixture), fixture.toAbsolutePath().toString());
    Path dir = Files.createTempDirectory("radixserve-" + name);
    try (var files = Files.list(fixture)) {
      for (Path f : files.toList()) {
        Files.copy(f, dir.resolve(f.getFileName()));
      }
    }
    JsonNode expected = JSON.readTree(dir.resolve("expected.json").toFile());
    RadixServer server = LocalServers.startCheckpoint(dir, name);
    try {
      JsonNode steps = expected.get("steps");
      String body = "{\"model\":\"" + name + "\",\"prompt\":"
          + JSON.writeValueAsString(expected.get("prompt").asText()) + ",\"max_tokens\":"
          + steps.size() + ",\"temperature\":0,\"ignore_eos\":true,\"logprobs\":1}";
      JsonNode first = completion(server, body);
      JsonNode second = completion(server, body);
      assertEquals(0, first.at("/usage/prompt_tokens_details/cached_tokens").asInt());
      assertTrue(second.at("/usage/prompt_tokens_details/cached_tokens").asInt() > 16,
          second.toString());
      for (JsonNode r : new JsonNode[] {first, second}) {
        JsonNode lp = r.at("/choices/0/logprobs/token_logprobs");
        assertEquals(steps.size(), lp.size(), r.toString());
        for (int i = 0; i < steps.size(); i++) {
          // every step's top-2 gap is far above 1e-4 in these fixtures: no near-tie to allow
          assertEquals(steps.get(i).get("top_logprobs").get(0).asDouble(), lp.get(i).asDouble(),
              1e-4, name + " step " + i + " " + r);
        }
      }
      int[] tokens = new int[steps.size()];
      for (int i = 0; i < tokens.length; i++) {
        tokens[i] = steps.get(i).get("token").asInt();
      }
      // the text is transformers' tokens' bytes as UTF-8 (gemma3's greedy run is byte-fallback
      // tokens, several not valid UTF-8: each bad byte a U+FFFD)
      try (HfTokenizer tokenizer = HfTokenizer.load(dir)) {
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        for (int t : tokens) {
          bytes.writeBytes(tokenizer.tokenBytes(t));
        }
        assertEquals(bytes.toString(java.nio.charset.StandardCharsets.UTF_8),
            first.at("/choices/0/text").asText());
      }
      assertEquals(first.at("/choices/0/text"), second.at("/choices/0/text"));
      assertEquals(expected.get("prompt_ids").size(), first.at("/usage/prompt_tokens").asInt());
    } finally {
      server.shutdown(Duration.ofSeconds(5));
      LocalServers.deleteModelDir(dir);
    }
  }

  private static JsonNode completion(RadixServer server, String body) throws Exception {
    HttpResponse<String> r = CLIENT.send(HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + server.port() + "/v1/completions"))
        .POST(HttpRequest.BodyPublishers.ofString(body)).build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), r.body());
    return JSON.readTree(r.body());
  }
}
