package dev.radixserve.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.radixserve.server.config.ServerConfig;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The victim scenario over real HTTP with the real model: client A sends one request of 256
 * prompts, then client B a small one. With fair shares B is admitted before any more of A's
 * prompts and finishes before any of A's; without, B waits for one of A's to finish. Order, not
 * time: read from the server's own counters when B's response arrives.
 */
class FairShareEndToEndTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient CLIENT = HttpClient.newHttpClient();
  private static final int SLOTS = 16;

  @Test
  void aSmallRequestOfAnotherClientGoesAheadOfA256PromptRequest() throws Exception {
    String metrics = victim(true);
    // A's first 16 prompts and B's one: none of A's other 240 prompts was admitted before B
    assertEquals(SLOTS + 1, (int) value(metrics, "radixserve_request_queue_time_seconds_count"));
    // B finished first: A's prompts need 200 tokens each
    assertEquals(1, (int) value(metrics, "radixserve_requests_finished_total\\{finish_reason=\"length\",\\}"));
    assertEquals(1, (int) value(metrics, "radixserve_fair_share_preemptions_total"));
    assertTrue(value(metrics, "radixserve_client_sequences_waiting\\{client=\"a\",\\}") > 200,
        metrics);
  }

  @Test
  void withoutFairSharesTheSmallRequestWaitsForOneOfTheLargeOnesToFinish() throws Exception {
    String metrics = victim(false);
    assertTrue(value(metrics, "radixserve_requests_finished_total\\{finish_reason=\"length\",\\}")
        >= 2, metrics);
    assertEquals(0, (int) value(metrics, "radixserve_fair_share_preemptions_total"));
  }

  /** Runs the scenario; returns /metrics as B's response arrived. */
  private static String victim(boolean fair) throws Exception {
    ServerConfig.Builder b = LocalServers.builder(2048);
    b.maxNumSeqs = SLOTS;
    b.fairShare = fair;
    b.clientIdHeader = "X-Client";
    RadixServer server = RadixServer.start(b.build());
    try (Socket a = new Socket("127.0.0.1", server.port())) {
      StringBuilder prompts = new StringBuilder();
      for (int i = 0; i < 256; i++) {
        prompts.append(i == 0 ? "" : ",").append("\"Story ").append(i).append(":\"");
      }
      a.getOutputStream().write(RawHttp.post("/v1/completions", "{\"model\":"
          + "\"radixserve-embedded-gpt2\",\"prompt\":[" + prompts + "],\"max_tokens\":200,"
          + "\"ignore_eos\":true,\"stream\":true}", "X-Client: a"));
      a.setSoTimeout(RawHttp.STALL_MS);
      // A's first token event: its first slots are running before B arrives (the response head
      // alone can come before the engine has admitted anything, which let B in early when loaded)
      awaitFirstEvent(a.getInputStream());
      // and all its slots: the first token can stream while A's 16th prompt still waits for
      // admission, and B then took that slot without fair shares (a CI run on 2026-11-25: A 15
      // running, B 1)
      awaitAdmitted(server, SLOTS);
      HttpResponse<String> r = CLIENT.send(HttpRequest.newBuilder(
              URI.create("http://127.0.0.1:" + server.port() + "/v1/completions"))
          .header("X-Client", "b")
          .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"radixserve-embedded-gpt2\","
              + "\"prompt\":\"Once\",\"max_tokens\":2,\"ignore_eos\":true}"))
          .build(), HttpResponse.BodyHandlers.ofString());
      String metrics = server.scrapeMetrics();
      assertEquals(200, r.statusCode(), r.body());
      JsonNode body = JSON.readTree(r.body());
      assertEquals(2, body.at("/usage/completion_tokens").asInt());
      return metrics;
    } finally {
      server.shutdown(Duration.ofMillis(1)); // aborts what is left of A
    }
  }

  /** Polls the server's own counter until {@code n} sequences have been admitted. */
  private static void awaitAdmitted(RadixServer server, int n) throws Exception {
    String admitted = "radixserve_request_queue_time_seconds_count";
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    String metrics = server.scrapeMetrics();
    while (value(metrics, admitted) < n) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError(n + " sequences were never admitted: " + metrics);
      }
      Thread.sleep(1);
      metrics = server.scrapeMetrics();
    }
  }

  private static void awaitFirstEvent(java.io.InputStream in) throws java.io.IOException {
    byte[] marker = "data: ".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    int matched = 0;
    while (matched < marker.length) {
      int b = in.read();
      assertTrue(b >= 0, "A's stream ended before its first event");
      matched = b == marker[matched] ? matched + 1 : (b == marker[0] ? 1 : 0);
    }
  }

  private static double value(String metrics, String series) {
    Matcher m = Pattern.compile("(?m)^" + series + " (\\S+)$").matcher(metrics);
    assertTrue(m.find(), series + " in\n" + metrics);
    return Double.parseDouble(m.group(1));
  }
}
