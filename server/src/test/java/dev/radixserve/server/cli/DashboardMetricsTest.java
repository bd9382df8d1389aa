package dev.radixserve.server.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.server.RadixServer;
import dev.radixserve.server.config.ServerConfig;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The real server's /metrics (KV events and both cache tiers on, so every radixserve_* family
 * exists): every series
 * the Grafana dashboard queries is exported, and every radixserve_* family says what it means.
 */
class DashboardMetricsTest {

  private static final Pattern SERIES = Pattern.compile("(?m)^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]");
  private static final Pattern HELP = Pattern.compile("(?m)^# HELP (radixserve_\\S+) ?(.*)$");
  private static final Pattern TYPE = Pattern.compile("(?m)^# TYPE (radixserve_\\S+) ");
  private static String metrics;

  @BeforeAll
  static void scrapeAfterOneCompletion() throws Exception {
    ServerConfig.Builder b = ServerConfig.builder();
    b.host = "127.0.0.1";
    b.port = 0;
    b.numBlocks = 64;
    b.kvEvents = true;
    b.kvEventsEndpoint = "tcp://127.0.0.1:*";
    b.kvOffloadMemoryBytes = 16L << 20;
    java.nio.file.Path tierDir = java.nio.file.Files.createTempDirectory("radixserve-tier");
    b.kvOffloadDir = tierDir;
    RadixServer server = RadixServer.start(b.build());
    try {
      String base = "http://127.0.0.1:" + server.port();
      HttpClient http = HttpClient.newHttpClient();
      // One completion of several tokens so the histograms (TTFT, inter-token) have samples.
      HttpResponse<String> completion = http.send(HttpRequest.newBuilder(URI.create(base + "/v1/completions"))
              .header("Content-Type", "application/json")
              .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\""
                  + ServerConfig.EMBEDDED_MODEL_NAME
                  + "\",\"prompt\":\"hello radix\",\"max_tokens\":4,\"temperature\":0}"))
              .build(), HttpResponse.BodyHandlers.ofString());
      assertEquals(200, completion.statusCode(), completion.body());
      metrics = http.send(HttpRequest.newBuilder(URI.create(base + "/metrics")).build(),
          HttpResponse.BodyHandlers.ofString()).body();
    } finally {
      server.shutdown(Duration.ofSeconds(5));
      server.awaitTermination();
      try (var files = java.nio.file.Files.list(tierDir)) {
        for (java.nio.file.Path f : files.toList()) {
          java.nio.file.Files.delete(f);
        }
      }
      java.nio.file.Files.delete(tierDir);
    }
  }

  @Test
  void everyDashboardMetricIsExported() throws Exception {
    Set<String> exported = new TreeSet<>();
    Matcher m = SERIES.matcher(metrics);
    while (m.find()) {
      exported.add(m.group(1));
    }
    Set<String> missing = new TreeSet<>(DashboardQueries.metricNames(DashboardQueries.DASHBOARD));
    missing.removeAll(exported);
    assertEquals(Set.of(), missing, "queried by the dashboard but not in /metrics");
    assertTrue(Pattern.compile("(?m)^radixserve_time_to_first_token_seconds_count(\\{[^}]*})? 1(\\.0)?$")
        .matcher(metrics).find(), metrics);
  }

  @Test
  void everyRadixserveFamilyHasAMeaningfulHelpLine() {
    Map<String, String> help = new TreeMap<>();
    Matcher h = HELP.matcher(metrics);
    while (h.find()) {
      help.put(h.group(1), h.group(2).strip());
    }
    Set<String> typed = new TreeSet<>();
    Matcher t = TYPE.matcher(metrics);
    while (t.find()) {
      typed.add(t.group(1));
    }
    // docs/observability.md's table: 22 families (histograms add a _max gauge of their own)
    assertTrue(typed.size() >= 22, "radixserve_ families: " + typed);
    assertEquals(typed, help.keySet(), "families without a # HELP line");
    help.forEach((name, text) -> {
      assertTrue(text.length() >= 15, name + ": HELP too short: '" + text + "'");
      assertTrue(!text.replace(' ', '_').toLowerCase().contains(name.substring(11)),
          name + ": HELP only repeats the name: '" + text + "'");
    });
  }
}
