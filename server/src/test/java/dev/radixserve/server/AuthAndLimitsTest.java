package dev.radixserve.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.radixserve.server.config.ServerConfig;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** API key (401), body limit (413), stop strings, echo, tokenize/detokenize, reset. */
class AuthAndLimitsTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient CLIENT = HttpClient.newHttpClient();
  private static RadixServer server;

  @BeforeAll
  static void start() {
    ServerConfig.Builder b = LocalServers.builder(128);
    b.apiKey = "sekret";
    b.maxRequestBodyBytes = 2048;
    server = RadixServer.start(b.build());
  }

  @AfterAll
  static void stop() {
    server.shutdown(Duration.ofSeconds(5));
  }

  private static HttpResponse<String> post(String path, String body, String key) throws Exception {
    HttpRequest.Builder r = HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + server.port() + path))
        .POST(HttpRequest.BodyPublishers.ofString(body));
    if (key != null) {
      r.header("Authorization", "Bearer " + key);
    }
    return CLIENT.send(r.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void apiKeyAndBodyLimit() throws Exception {
    String good = "{\"model\":\"radixserve-embedded-gpt2\",\"prompt\":\"hi\",\"max_tokens\":2}";
    assertEquals(401, post("/v1/completions", good, null).statusCode());
    assertEquals(401, post("/v1/completions", good, "wrong").statusCode());
    HttpResponse<String> big = post("/v1/completions",
        "{\"model\":\"radixserve-embedded-gpt2\",\"prompt\":\"" + "x".repeat(4000) + "\"}", "sekret");
    assertEquals(413, big.statusCode());
    assertTrue(JSON.readTree(big.body()).at("/error/message").isTextual());
    assertEquals(200, post("/v1/completions", good, "sekret").statusCode());
  }

  @Test
  void stopEchoAndTokenizeRoundTrip() throws Exception {
    JsonNode plain = JSON.readTree(post("/v1/completions",
        "{\"model\":\"radixserve-embedded-gpt2\",\"prompt\":\"abc\",\"max_tokens\":8,\"temperature\":0,\"ignore_eos\":true}", "sekret").body());
    String text = plain.at("/choices/0/text").asText();
    String stop = text.substring(2, 4);
    JsonNode stopped = JSON.readTree(post("/v1/completions",
        "{\"model\":\"radixserve-embedded-gpt2\",\"prompt\":\"abc\",\"max_tokens\":8,\"temperature\":0,\"ignore_eos\":true,\"stop\":"
            + JSON.writeValueAsString(stop) + "}", "sekret").body());
    assertEquals(text.substring(0, text.indexOf(stop)), stopped.at("/choices/0/text").asText());
    assertEquals("stop", stopped.at("/choices/0/finish_reason").asText());
    JsonNode echoed = JSON.readTree(post("/v1/completions",
        "{\"model\":\"radixserve-embedded-gpt2\",\"prompt\":\"abc\",\"max_tokens\":8,\"temperature\":0,\"ignore_eos\":true,\"echo\":true}",
        "sekret").body());
    assertEquals("abc" + text, echoed.at("/choices/0/text").asText());
    JsonNode tok = JSON.readTree(post("/tokenize", "{\"model\":\"radixserve-embedded-gpt2\",\"prompt\":\"hello world\"}", "sekret").body());
    assertEquals(2, tok.get("count").asInt());
    JsonNode detok = JSON.readTree(post("/detokenize", "{\"tokens\":" + tok.get("tokens") + "}",
        "sekret").body());
    assertEquals("hello world", detok.get("prompt").asText());
    assertEquals(200, post("/reset_prefix_cache", "", "sekret").statusCode());
    assertTrue(server.inspect().quiescent());
    assertEquals(0, server.inspect().cachedBlocks());
  }
}
