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
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** Every series the Grafana dashboard queries is exported by the real server's /metrics. */
class DashboardMetricsTest {

  private static final Pattern SERIES = Pattern.compile("(?m)^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]");

  @Test
  void everyDashboardMetricIsExported() throws Exception {
    ServerConfig.Builder b = ServerConfig.builder();
    b.host = "127.0.0.1";
    b.port = 0;
    b.numBlocks = 64;
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
      String metrics = http.send(HttpRequest.newBuilder(URI.create(base + "/metrics")).build(),
          HttpResponse.BodyHandlers.ofString()).body();

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
    } finally {
      server.shutdown(Duration.ofSeconds(5));
      server.awaitTermination();
    }
  }
}
