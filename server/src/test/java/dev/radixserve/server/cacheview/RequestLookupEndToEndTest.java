package dev.radixserve.server.cacheview;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.radixserve.server.LocalServers;
import dev.radixserve.server.RadixServer;
import dev.radixserve.server.config.ServerConfig;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code /cache/tree?request=ID} asked the moment a response has arrived finds the request and
 * the path it matched (no stream open, so nothing else drains the engine's events first).
 */
class RequestLookupEndToEndTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient CLIENT = HttpClient.newHttpClient();
  private static final String SHARED = "A lighthouse keeper writes in the log every evening:"
      + " the weather, the ships that passed, the state of the lamp and the sea. Entry:";
  private static RadixServer server;

  @BeforeAll
  static void start() {
    server = RadixServer.start(LocalServers.builder(256).build());
  }

  @AfterAll
  static void stop() {
    server.shutdown(Duration.ofSeconds(5));
  }

  @Test
  void aRequestIsFoundWithItsPathRightAfterItsResponse() throws Exception {
    completion(SHARED + " calm.");
    for (int i = 0; i < 8; i++) {
      String id = completion(SHARED + " day " + i + ", fog and rain.");
      JsonNode r = JSON.readTree(get("/cache/tree?request=" + id)).get("request");
      assertTrue(r.get("found").asBoolean(), "try " + i + ": " + r);
      assertEquals(1, r.get("matches").size(), r.toString());
      JsonNode m = r.get("matches").get(0);
      assertEquals(id + "-0", m.get("request").asText());
      assertTrue(m.get("matched_tokens").asInt() >= 16, m.toString()); // the shared block at least
      assertTrue(m.get("in_cache").asBoolean(), "try " + i + ": snapshot older than the match: " + m);
      assertTrue(m.get("path").size() >= 2, m.toString()); // the root, then the matched nodes
    }
    assertTrue(server.inspect().quiescent(), server.inspect().toString());
  }

  private static String get(String path) throws Exception {
    HttpResponse<String> r = CLIENT.send(HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + server.port() + path)).build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), r.body());
    return r.body();
  }

  private static String completion(String prompt) throws Exception {
    HttpResponse<String> r = CLIENT.send(HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + server.port() + "/v1/completions"))
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\""
            + ServerConfig.EMBEDDED_MODEL_NAME + "\",\"prompt\":" + JSON.writeValueAsString(prompt)
            + ",\"max_tokens\":2,\"temperature\":0}")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), r.body());
    return JSON.readTree(r.body()).get("id").asText();
  }
}
