package dev.radixserve.server;

import static dev.radixserve.server.LocalServers.metric;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.radixserve.server.config.ServerConfig;
import dev.radixserve.server.engine.EngineSnapshot;
import java.io.InputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * Greedy outputs with the cache on equal those with it off, also under a tiny pool that forces
 * preemption; a client that disconnects mid-stream gets its blocks back.
 */
class CacheEquivalenceTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient CLIENT = HttpClient.newHttpClient();

  private static RadixServer start(boolean caching, int blocks) {
    ServerConfig.Builder b = LocalServers.builder(blocks);
    b.prefixCaching = caching;
    return RadixServer.start(b.build());
  }

  private static String complete(RadixServer s, String prompt, int max) {
    try {
      HttpResponse<String> r = CLIENT.send(HttpRequest.newBuilder(
              URI.create("http://127.0.0.1:" + s.port() + "/v1/completions"))
          .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"radixserve-embedded-gpt2\",\"prompt\":" + JSON.writeValueAsString(prompt)
              + ",\"max_tokens\":" + max + ",\"temperature\":0,\"ignore_eos\":true}")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertEquals(200, r.statusCode(), r.body());
      JsonNode j = JSON.readTree(r.body());
      return j.at("/choices/0/text").asText();
    } catch (Exception e) {
      throw new RuntimeException(e);
    }
  }

  private static List<String> run(RadixServer s, List<String> prompts, int max) {
    List<CompletableFuture<String>> fs = new ArrayList<>();
    for (String p : prompts) {
      fs.add(CompletableFuture.supplyAsync(() -> complete(s, p, max)));
    }
    return fs.stream().map(CompletableFuture::join).toList();
  }

  private static List<String> prompts() {
    List<String> out = new ArrayList<>();
    String system = "You are a helpful assistant that answers briefly. ".repeat(6);
    for (int i = 0; i < 8; i++) {
      out.add(system + "Question " + i + ": what is " + i + " plus " + i + "?");
    }
    return out;
  }

  private static String get(RadixServer s, String path, String body) {
    try {
      HttpRequest.Builder b = HttpRequest.newBuilder(
          URI.create("http://127.0.0.1:" + s.port() + path));
      return CLIENT.send(body == null ? b.build() : b.POST(HttpRequest.BodyPublishers.ofString(
          body)).build(), HttpResponse.BodyHandlers.ofString()).body();
    } catch (Exception e) {
      throw new RuntimeException(e);
    }
  }

  private static int promptLength(RadixServer s, String prompt) {
    try {
      return JSON.readTree(get(s, "/tokenize", "{\"model\":\"radixserve-embedded-gpt2\",\"prompt\":"
          + JSON.writeValueAsString(prompt)
          + "}")).get("count").asInt();
    } catch (Exception e) {
      throw new RuntimeException(e);
    }
  }

  private static void assertQuiescent(RadixServer s) {
    EngineSnapshot snap = s.inspect();
    assertNull(snap.integrityError());
    assertTrue(snap.quiescent(), snap.toString());
  }

  @Test
  void cacheOnEqualsCacheOffAlsoUnderPreemption() {
    RadixServer off = start(false, 256);
    List<String> expected;
    try {
      expected = run(off, prompts(), 60);
      assertQuiescent(off);
    } finally {
      off.shutdown(Duration.ofSeconds(5));
    }
    RadixServer on = start(true, 256);
    try {
      assertEquals(expected, run(on, prompts(), 60));
      double cachedBefore = metric(on, "radixserve_prompt_tokens_cached_total");
      assertEquals(expected, run(on, prompts(), 60)); // second round hits the cache
      // to the token: each repeat computes only its last prompt token, most starting inside a
      // cached block from a copy of it
      int allButLast = prompts().stream().mapToInt(p -> promptLength(on, p) - 1).sum();
      assertEquals(allButLast, metric(on, "radixserve_prompt_tokens_cached_total") - cachedBefore);
      assertQuiescent(on);
    } finally {
      on.shutdown(Duration.ofSeconds(5));
    }
    // 8 requests of ~150 tokens need 80 blocks; admitted 4 at a time on 6-block prompts, they
    // outgrow 24 blocks while decoding: preemption
    RadixServer tiny = start(true, 24);
    try {
      assertEquals(expected, run(tiny, prompts(), 60));
      assertQuiescent(tiny);
      assertTrue(metric(tiny, "radixserve_preemptions_total") > 0);
    } catch (Exception e) {
      throw new RuntimeException(e);
    } finally {
      tiny.shutdown(Duration.ofSeconds(5));
    }
  }

  @Test
  void disconnectMidStreamReleasesEverything() throws Exception {
    RadixServer s = start(true, 256);
    try {
      String body = "{\"model\":\"radixserve-embedded-gpt2\",\"prompt\":\"tell me a long story\",\"max_tokens\":900,\"temperature\":0,"
          + "\"ignore_eos\":true,\"stream\":true}";
      try (Socket socket = new Socket("127.0.0.1", s.port())) {
        socket.getOutputStream().write(("POST /v1/completions HTTP/1.1\r\nHost: x\r\n"
            + "Content-Type: application/json\r\nContent-Length: " + body.length() + "\r\n\r\n"
            + body).getBytes(StandardCharsets.UTF_8));
        InputStream in = socket.getInputStream();
        byte[] buf = new byte[4096];
        int total = 0;
        while (total < 2000) { // a few chunks streamed: the request is running
          int n = in.read(buf);
          assertTrue(n > 0);
          total += n;
        }
      }
      EngineSnapshot snap = s.inspect();
      for (int i = 0; i < 200 && !snap.quiescent(); i++) {
        Thread.sleep(20); // the abort travels channel close → engine inbox
        snap = s.inspect();
      }
      assertNull(snap.integrityError());
      assertTrue(snap.quiescent(), snap.toString());
      assertEquals(3, complete(s, "still serving", 3).isEmpty() ? 0 : 3);
    } finally {
      s.shutdown(Duration.ofSeconds(5));
    }
  }
}
