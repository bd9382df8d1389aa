package dev.radixserve.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.radixserve.server.config.ServerConfig;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The cache tiers through the HTTP server and the embedded model: an evicted prompt comes back
 * from host memory; a restarted server serves a known prompt from the disk tier (its cached
 * tokens reported, its greedy text that of a server with the cache off), skips a corrupted entry
 * and computes that part; {@code /reset_prefix_cache} empties the directory; a request cut off by
 * the shutdown leaves what it computed there too (how a prompt longer than one run is prefilled
 * in parts: bench/memory/long-prompt.sh).
 */
class TierRestartTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient CLIENT = HttpClient.newHttpClient();
  private static final String SYSTEM = "You are a careful assistant. Answer in one short line. ";
  /** About 200 tokens: 12 whole blocks of 16. */
  static final String PROMPT = SYSTEM.repeat(18) + "What is seven times six?";

  @TempDir
  Path dir;

  private static RadixServer start(int blocks, boolean caching, long hostBytes, Path tierDir) {
    ServerConfig.Builder b = LocalServers.builder(blocks);
    b.prefixCaching = caching;
    b.warmup = false;
    b.kvOffloadMemoryBytes = hostBytes;
    b.kvOffloadDir = tierDir;
    return RadixServer.start(b.build());
  }

  /** Text and cached tokens of a greedy completion. */
  record Completion(String text, int cachedTokens) {}

  static Completion complete(RadixServer s, String prompt) throws Exception {
    HttpResponse<String> r = CLIENT.send(HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + s.port() + "/v1/completions"))
        .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"radixserve-embedded-gpt2\",\"prompt\":" + JSON.writeValueAsString(prompt)
            + ",\"max_tokens\":8,\"temperature\":0,\"ignore_eos\":true}")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), r.body());
    JsonNode j = JSON.readTree(r.body());
    return new Completion(j.at("/choices/0/text").asText(),
        j.at("/usage/prompt_tokens_details/cached_tokens").asInt());
  }

  static String send(RadixServer s, String path, boolean post) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + s.port() + path));
    HttpResponse<String> r = CLIENT.send(post ? b.POST(HttpRequest.BodyPublishers.noBody()).build()
        : b.build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), r.body());
    return r.body();
  }

  /** A tier counter's value from /metrics. */
  static double metric(RadixServer s, String name, String tier) throws Exception {
    Matcher m = Pattern.compile("(?m)^" + name + "\\{tier=\"" + tier + "\"[^}]*\\} (\\S+)$")
        .matcher(send(s, "/metrics", false));
    assertTrue(m.find(), name + " for " + tier + " not in /metrics");
    return Double.parseDouble(m.group(1));
  }

  /** A counter's value from /metrics, 0 before its first sample. */
  static double counter(RadixServer s, String name) throws Exception {
    Matcher m = Pattern.compile("(?m)^" + name + "(\\{[^}]*\\})? (\\S+)$")
        .matcher(send(s, "/metrics", false));
    return m.find() ? Double.parseDouble(m.group(2)) : 0;
  }

  private static String reference(String prompt) throws Exception {
    RadixServer off = start(64, false, 0, null);
    try {
      return complete(off, prompt).text();
    } finally {
      off.shutdown(Duration.ofSeconds(5));
    }
  }

  private List<Path> entries() throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(p -> p.toString().endsWith(".kvb")).sorted().toList();
    }
  }

  @Test
  void anEvictedPromptComesBackFromHostMemory() throws Exception {
    String other = "Summarise the following list of fruit: apple, pear, plum. ".repeat(16);
    RadixServer s = start(16, true, 64L << 20, null); // 16 blocks: one ~200-token prompt at a time
    try {
      Completion first = complete(s, PROMPT);
      assertEquals(0, first.cachedTokens());
      complete(s, other); // evicts PROMPT's blocks into the host tier
      Completion again = complete(s, PROMPT);
      assertEquals(reference(PROMPT), again.text());
      assertEquals(first.text(), again.text());
      assertTrue(again.cachedTokens() >= 12 * 16, "cached " + again.cachedTokens());
      assertTrue(metric(s, "radixserve_kv_tier_loaded_blocks_total", "host") >= 12);
      assertTrue(s.inspect().quiescent(), s.inspect().toString());
    } finally {
      s.shutdown(Duration.ofSeconds(5));
    }
  }

  @Test
  void aRestartedServerServesAKnownPromptFromDisk() throws Exception {
    String expected = reference(PROMPT);
    RadixServer first = start(64, true, 0, dir);
    Completion cold;
    try {
      cold = complete(first, PROMPT);
      assertEquals(0, cold.cachedTokens());
      assertEquals(expected, cold.text());
    } finally {
      first.shutdown(Duration.ofSeconds(5)); // writes the cached blocks to the directory
    }
    int written = entries().size();
    assertTrue(written >= 12, "entries on disk: " + written);

    RadixServer restarted = start(64, true, 0, dir);
    try {
      assertEquals(written, metric(restarted, "radixserve_kv_tier_entries", "disk"));
      Completion warm = complete(restarted, PROMPT);
      assertEquals(expected, warm.text());
      assertTrue(warm.cachedTokens() >= 12 * 16, "cached " + warm.cachedTokens());
      assertTrue(metric(restarted, "radixserve_kv_tier_loaded_blocks_total", "disk") >= 12);
      assertTrue(restarted.inspect().quiescent(), restarted.inspect().toString());
    } finally {
      restarted.shutdown(Duration.ofSeconds(5));
    }

    // a corrupted entry (one payload byte flipped) is skipped on load: that block and the rest
    // of the prompt are computed, the text is unchanged
    for (Path p : entries()) {
      try (RandomAccessFile f = new RandomAccessFile(p.toFile(), "rw")) {
        f.seek(f.length() - 100);
        int b = f.read();
        f.seek(f.length() - 100);
        f.write(b ^ 1);
      }
    }
    RadixServer third = start(64, true, 0, dir);
    try {
      Completion afterCorruption = complete(third, PROMPT);
      assertEquals(expected, afterCorruption.text());
      assertEquals(0, afterCorruption.cachedTokens()); // block 0 was corrupt: nothing loads
      assertEquals(1, metric(third, "radixserve_kv_tier_corrupt_blocks_total", "disk"));
      send(third, "/reset_prefix_cache", true);
      assertEquals(0, metric(third, "radixserve_kv_tier_entries", "disk"));
      assertEquals(List.of(), entries());
    } finally {
      third.shutdown(Duration.ofSeconds(5));
    }
  }

  @Test
  void aRequestCutOffByTheShutdownLeavesWhatItComputedOnDisk() throws Exception {
    String expected = reference(PROMPT);
    RadixServer first = start(128, true, 0, dir);
    CompletableFuture<HttpResponse<String>> stream = CLIENT.sendAsync(HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + first.port() + "/v1/completions"))
        .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"radixserve-embedded-gpt2\","
            + "\"prompt\":" + JSON.writeValueAsString(PROMPT) + ",\"max_tokens\":800,"
            + "\"temperature\":0,\"ignore_eos\":true,\"stream\":true}")).build(),
        HttpResponse.BodyHandlers.ofString());
    for (int i = 0; i < 3000 && counter(first, "radixserve_generation_tokens_total") < 64; i++) {
      Thread.sleep(10);
    }
    assertTrue(counter(first, "radixserve_generation_tokens_total") >= 64, "never decoding");
    first.shutdown(Duration.ZERO); // no drain: the request is cut off, its KV cached and written
    String body = stream.get().body();
    assertTrue(body.contains("shut down"), "cut off, not finished: " + body);
    // the prompt's whole blocks and those of 63+ decoded tokens: 18 entries here, and 13 (the
    // prompt's alone) when the cut request's KV was released rather than cached
    int written = entries().size();
    assertTrue(written >= 15, "entries on disk: " + written);

    RadixServer restarted = start(64, true, 0, dir);
    try {
      Completion warm = complete(restarted, PROMPT);
      assertEquals(expected, warm.text());
      assertTrue(warm.cachedTokens() >= 12 * 16, "cached " + warm.cachedTokens());
      assertTrue(restarted.inspect().quiescent(), restarted.inspect().toString());
    } finally {
      restarted.shutdown(Duration.ofSeconds(5));
    }
  }
}
