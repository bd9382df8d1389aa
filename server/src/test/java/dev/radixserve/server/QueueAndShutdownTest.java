package dev.radixserve.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.radixserve.server.config.ServerConfig;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.IntPredicate;
import org.junit.jupiter.api.Test;

/**
 * 429 when the waiting queue is full, and a graceful shutdown: 503 for new work while running
 * requests drain to completion. One sequence runs at a time ({@code maxNumSeqs = 1}) so the
 * queue fills deterministically; the test waits for states through /metrics, never on time.
 */
class QueueAndShutdownTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient CLIENT = HttpClient.newHttpClient();

  @Test
  void queueFullThenDrainOnShutdown() throws Exception {
    ServerConfig.Builder b = LocalServers.builder(128);
    b.maxNumSeqs = 1;
    b.maxQueuedRequests = 1;
    RadixServer server = RadixServer.start(b.build());
    int port = server.port();

    CompletableFuture<HttpResponse<String>> running = post(port, 120);
    awaitGauge(port, "radixserve_requests_running", n -> n == 1);
    CompletableFuture<HttpResponse<String>> queued = post(port, 4);
    awaitGauge(port, "radixserve_requests_waiting", n -> n == 1);

    HttpResponse<String> rejected = post(port, 4).get();
    assertEquals(429, rejected.statusCode(), rejected.body());
    JsonNode error = JSON.readTree(rejected.body()).get("error");
    assertEquals("rate_limit_error", error.get("type").asText(), rejected.body());
    assertTrue(error.get("message").asText().contains("waiting"), rejected.body());

    assertEquals(200, running.get().statusCode());
    assertEquals(200, queued.get().statusCode());
    assertEquals(200, post(port, 2).get().statusCode(), "a good request after the 429 works");

    // long enough that the drain outlasts the /health polls below even on a fast machine
    CompletableFuture<HttpResponse<String>> draining = post(port, 600);
    awaitGauge(port, "radixserve_requests_running", n -> n == 1);
    Thread stopper = Thread.ofPlatform().start(() -> server.shutdown(Duration.ofSeconds(60)));
    awaitHealth(port, 503);
    HttpResponse<String> late = post(port, 2).get();
    assertEquals(503, late.statusCode(), late.body());
    assertTrue(JSON.readTree(late.body()).at("/error/message").isTextual(), late.body());

    HttpResponse<String> drained = draining.get();
    assertEquals(200, drained.statusCode(), drained.body());
    JsonNode choice = JSON.readTree(drained.body()).at("/choices/0");
    assertEquals("length", choice.get("finish_reason").asText(), "drained, not aborted");
    assertEquals(600, JSON.readTree(drained.body()).at("/usage/completion_tokens").asInt());
    stopper.join();
  }

  @Test
  void aStreamCutByShutdownEndsWithAnErrorEventInTheSameShapeThenDone() throws Exception {
    RadixServer server = RadixServer.start(LocalServers.builder(128).build());
    int port = server.port();
    CompletableFuture<HttpResponse<String>> stream = CLIENT.sendAsync(HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + port + "/v1/completions"))
        .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"radixserve-embedded-gpt2\","
            + "\"prompt\":\"Once\",\"max_tokens\":1000,\"ignore_eos\":true,\"stream\":true}"))
        .build(), HttpResponse.BodyHandlers.ofString());
    awaitGauge(port, "radixserve_requests_running", n -> n == 1);
    server.shutdown(Duration.ZERO); // no drain: the running request is cut off
    HttpResponse<String> r = stream.get();
    assertEquals(200, r.statusCode());
    String[] events = r.body().split("\n\n");
    assertEquals("data: [DONE]", events[events.length - 1], r.body());
    JsonNode error = JSON.readTree(events[events.length - 2].substring(6)).get("error");
    assertEquals("server_error", error.get("type").asText(), r.body());
    assertTrue(error.get("param").isNull(), r.body());
    assertEquals("503", error.get("code").asText(), r.body());
    assertTrue(error.get("message").asText().contains("shut down"), r.body());
  }

  private static CompletableFuture<HttpResponse<String>> post(int port, int maxTokens) {
    return CLIENT.sendAsync(HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + port + "/v1/completions"))
        .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"radixserve-embedded-gpt2\",\"prompt\":\"Once upon a time\",\"max_tokens\":"
            + maxTokens + ",\"temperature\":0,\"ignore_eos\":true}"))
        .build(), HttpResponse.BodyHandlers.ofString());
  }

  /** Polls a gauge until it satisfies the condition (bounded; fails with the last value). */
  private static void awaitGauge(int port, String name, IntPredicate ok) throws Exception {
    String last = null;
    for (int i = 0; i < 600; i++) {
      String metrics = CLIENT.send(HttpRequest.newBuilder(
              URI.create("http://127.0.0.1:" + port + "/metrics")).build(),
          HttpResponse.BodyHandlers.ofString()).body();
      for (String line : metrics.split("\n")) {
        if (line.startsWith(name + " ")) {
          last = line;
          if (ok.test((int) Double.parseDouble(line.substring(name.length() + 1)))) {
            return;
          }
        }
      }
      Thread.sleep(20);
    }
    assertNull(last, "gauge never reached the expected value: " + last);
  }

  private static void awaitHealth(int port, int status) throws Exception {
    int last = -1;
    for (int i = 0; i < 600 && last != status; i++) {
      try {
        last = CLIENT.send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + port + "/health")).build(),
            HttpResponse.BodyHandlers.ofString()).statusCode();
      } catch (java.io.IOException refused) {
        last = -2;
      }
      if (last != status) {
        Thread.sleep(20);
      }
    }
    assertEquals(status, last, "health status");
  }
}
