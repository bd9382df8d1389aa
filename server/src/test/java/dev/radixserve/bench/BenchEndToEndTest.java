package dev.radixserve.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.radixserve.server.RadixServer;
import dev.radixserve.server.config.ServerConfig;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** bench against the real server, in-process, on the embedded random-weight model. */
class BenchEndToEndTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static RadixServer server;
  private static String url;

  @BeforeAll
  static void start() {
    ServerConfig.Builder b = ServerConfig.builder();
    b.host = "127.0.0.1";
    b.port = 0;
    server = RadixServer.start(b.build());
    url = "http://127.0.0.1:" + server.port();
  }

  @AfterAll
  static void stop() {
    if (server != null) {
      server.shutdown(Duration.ofSeconds(10));
    }
  }

  private static JsonNode bench(Path dir, String... workloadArgs) throws Exception {
    return run(dir, workloadArgs).path("summary");
  }

  /** The first measured run of the report. */
  private static JsonNode run(Path dir, String... workloadArgs) throws Exception {
    Path json = dir.resolve("bench-" + workloadArgs[1] + ".json");
    ByteArrayOutputStream text = new ByteArrayOutputStream();
    String[] args = new String[workloadArgs.length + 9];
    System.arraycopy(new String[] {"--url", url, "--max-tokens", "4", "--concurrency", "1",
        "--quiet", "--output", json.toString()}, 0, args, 0, 9);
    System.arraycopy(workloadArgs, 0, args, 9, workloadArgs.length);
    int exit = BenchCommand.commandLine(
            new BenchCommand(new PrintStream(text, true, StandardCharsets.UTF_8), System.err))
        .execute(args);
    System.out.print(text.toString(StandardCharsets.UTF_8)); // the tables, for the test report
    assertEquals(0, exit, text.toString(StandardCharsets.UTF_8));
    assertTrue(Files.size(json) > 0);
    return JSON.readTree(json.toFile()).path("runs").get(0);
  }

  @Test
  void sharingWorkloadGetsCachedTokens(@TempDir Path dir) throws Exception {
    JsonNode s = bench(dir, "--workload", "shared-prefix-basic");
    assertEquals(8, s.path("completed").asInt());
    assertEquals(0, s.path("failed").asInt());
    assertEquals(192, s.path("promptTokens").asInt());
    assertEquals(32, s.path("outputTokens").asInt());
    assertTrue(s.path("cachedTokensReported").asBoolean());
    // server block size 16: 7 requests × the 16-token shared prefix at most
    assertEquals(112, s.path("theoreticalMaxCachedTokens").asInt());
    long cached = s.path("cachedTokens").asLong();
    assertTrue(cached > 0 && cached <= 112, "cached " + cached);
    assertTrue(s.path("ttftMs").path("p50").asDouble() > 0);
  }

  @Test
  void aWarmServerIsEmptiedFirstSoTheMaximumHolds(@TempDir Path dir) throws Exception {
    String[] args = {"--workload", "shared-prefix-basic", "--seed", "5"};
    JsonNode first = run(dir, args);
    JsonNode again = run(dir, args); // the same prompts: the server holds them all now
    assertEquals("emptied (POST /reset_prefix_cache)", again.path("cacheAtStart").asText());
    long max = again.path("summary").path("theoreticalMaxCachedTokens").asLong();
    assertEquals(112, max);
    long cached = again.path("summary").path("cachedTokens").asLong();
    assertTrue(cached > 0 && cached <= max, "cached " + cached + " of at most " + max);
    assertEquals(first.path("summary").path("cachedTokens").asLong(), cached);
    // kept warm on request: every prompt is found whole but its last token, past the maximum
    JsonNode warm = run(dir, "--workload", "shared-prefix-basic", "--seed", "5",
        "--no-reset-cache");
    assertEquals("as found (--no-reset-cache)", warm.path("cacheAtStart").asText());
    assertEquals(8 * 23, warm.path("summary").path("cachedTokens").asLong());
  }

  @Test
  void compareAgainstTheSameServerWithoutPrefixCaching(@TempDir Path dir) throws Exception {
    ServerConfig.Builder b = ServerConfig.builder();
    b.host = "127.0.0.1";
    b.port = 0;
    b.prefixCaching = false;
    RadixServer off = RadixServer.start(b.build());
    try {
      Path json = dir.resolve("compare.json");
      ByteArrayOutputStream text = new ByteArrayOutputStream();
      int exit = BenchCommand.commandLine(
              new BenchCommand(new PrintStream(text, true, StandardCharsets.UTF_8), System.err))
          .execute("--url", url, "--compare-url", "http://127.0.0.1:" + off.port(),
              "--workload", "branching-conversation", "--seed", "11", "--max-tokens", "2",
              "--concurrency", "1", "--quiet", "--output", json.toString());
      System.out.print(text.toString(StandardCharsets.UTF_8));
      assertEquals(0, exit, text.toString(StandardCharsets.UTF_8));
      JsonNode c = JSON.readTree(json.toFile()).path("comparisons").get(0);
      assertEquals("branching-conversation", c.path("workload").asText());
      assertTrue(c.path("primaryHitRate").asDouble() > 0, c.toString());
      assertEquals(0.0, c.path("compareHitRate").asDouble(), c.toString());
      assertTrue(c.path("hitRateRatio").isNull(), c.toString());
      assertTrue(c.path("outputThroughputRatio").asDouble() > 0, c.toString());
    } finally {
      off.shutdown(Duration.ofSeconds(10));
    }
  }

  @Test
  void uniqueWorkloadGetsNone(@TempDir Path dir) throws Exception {
    JsonNode s = bench(dir, "--workload", "unique", "--num-requests", "4");
    assertEquals(4, s.path("completed").asInt());
    assertEquals(0, s.path("failed").asInt());
    assertEquals(4 * 256, s.path("promptTokens").asInt());
    assertEquals(0, s.path("cachedTokens").asInt());
    assertEquals(0, s.path("theoreticalMaxCachedTokens").asInt());
  }
}
