package dev.radixserve.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The command against a tiny in-test SSE stub: a test double for the client's parsing and the
 * report's shape only (the stub claims cached_tokens = 8 on every request). The real server is
 * exercised by {@code BenchEndToEndTest}.
 */
class BenchCommandTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private HttpServer stub;
  private final java.util.concurrent.atomic.AtomicInteger completions =
      new java.util.concurrent.atomic.AtomicInteger();

  @BeforeEach
  void startStub() throws IOException {
    stub = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    stub.createContext("/v1/models", ex -> reply(ex, 200, "application/json",
        "{\"object\":\"list\",\"data\":[{\"id\":\"stub-model\",\"object\":\"model\"}]}"));
    stub.createContext("/v1/completions", this::complete);
    stub.start();
  }

  @AfterEach
  void stopStub() {
    stub.stop(0);
  }

  private void complete(HttpExchange ex) throws IOException {
    completions.incrementAndGet();
    JsonNode body = JSON.readTree(ex.getRequestBody());
    if (!body.path("stream").asBoolean() || !body.path("ignore_eos").asBoolean()
        || !body.path("prompt").isArray()) {
      reply(ex, 400, "application/json", "{\"error\":{\"message\":\"bad request\"}}");
      return;
    }
    int prompt = body.path("prompt").size();
    int maxTokens = body.path("max_tokens").asInt();
    ex.getResponseHeaders().add("Content-Type", "text/event-stream");
    ex.sendResponseHeaders(200, 0);
    try (OutputStream out = ex.getResponseBody()) {
      for (int i = 0; i < maxTokens; i++) {
        // each event written in two pieces, split inside the JSON
        out.write("data: {\"choices\":[{\"index\":0,\"te".getBytes(StandardCharsets.UTF_8));
        out.flush();
        out.write(("xt\":\"t" + i + "\"}]}\n\n").getBytes(StandardCharsets.UTF_8));
        out.flush();
      }
      out.write(("data: {\"choices\":[],\"usage\":{\"prompt_tokens\":" + prompt
          + ",\"completion_tokens\":" + maxTokens
          + ",\"prompt_tokens_details\":{\"cached_tokens\":8}}}\n\ndata: [DONE]\n\n")
          .getBytes(StandardCharsets.UTF_8));
    }
  }

  private static void reply(HttpExchange ex, int status, String type, String text)
      throws IOException {
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().add("Content-Type", type);
    ex.sendResponseHeaders(status, bytes.length);
    try (OutputStream out = ex.getResponseBody()) {
      out.write(bytes);
    }
  }

  @Test
  void writesSummaryJsonAndChart(@TempDir Path dir) throws Exception {
    String url = "http://127.0.0.1:" + stub.getAddress().getPort();
    Path json = dir.resolve("bench.json");
    Path png = dir.resolve("bench.png");
    ByteArrayOutputStream text = new ByteArrayOutputStream();
    int exit = BenchCommand.commandLine(new BenchCommand(
            new PrintStream(text, true, StandardCharsets.UTF_8), System.err))
        .execute("--url", url, "--compare-url", url, "--workload", "shared-prefix-basic",
            "--max-tokens", "3", "--block-size", "4", "--concurrency", "2", "--quiet",
            "--warmup", "3", "--output", json.toString(), "--chart", png.toString());
    String printed = text.toString(StandardCharsets.UTF_8);
    assertEquals(0, exit, printed);
    // 3 warm-up requests per server, then the 8 measured ones per server; warm-ups not recorded
    assertEquals(2 * (3 + 8), completions.get());
    assertTrue(printed.contains("Theoretical max hit rate:"), printed);
    assertTrue(printed.contains("58.3%"), printed);

    JsonNode report = JSON.readTree(json.toFile());
    assertEquals(Set.of("settings", "runs", "comparisons"), fieldNames(report));
    assertEquals("stub-model", report.at("/settings/model").asText());
    assertEquals(2, report.path("runs").size());
    JsonNode run = report.path("runs").get(0);
    assertEquals("primary", run.path("role").asText());
    assertEquals("compare", report.path("runs").get(1).path("role").asText());
    JsonNode summary = run.path("summary");
    assertEquals(8, summary.path("completed").asInt());
    assertEquals(0, summary.path("failed").asInt());
    assertEquals(192, summary.path("promptTokens").asInt());
    assertEquals(64, summary.path("cachedTokens").asInt());
    assertEquals(24, summary.path("outputTokens").asInt());
    assertEquals(112, summary.path("theoreticalMaxCachedTokens").asInt());
    assertEquals(7, summary.path("theoreticalRequestsWithHit").asInt());
    assertEquals(Set.of("count", "mean", "p50", "p90", "p99", "min", "max"),
        fieldNames(summary.path("ttftMs")));
    JsonNode requests = run.path("requests");
    assertEquals(8, requests.size());
    assertEquals(2, requests.get(0).path("itlMs").size());
    assertEquals(24, requests.get(0).path("promptTokens").asInt());
    assertEquals(8, requests.get(0).path("cachedTokens").asInt());
    assertTrue(requests.get(0).path("success").asBoolean());
    JsonNode comparison = report.path("comparisons").get(0);
    assertEquals("shared-prefix-basic", comparison.path("workload").asText());
    assertEquals(1.0, comparison.path("hitRateRatio").asDouble(), 1e-12);

    var image = ImageIO.read(png.toFile());
    assertEquals(1200, image.getWidth());
  }

  @Test
  void badUsageExitsWithTwo() {
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int exit = BenchCommand.commandLine(new BenchCommand(System.out,
            new PrintStream(err, true, StandardCharsets.UTF_8)))
        .execute("--url", "http://127.0.0.1:1", "--workload", "nope");
    assertEquals(2, exit);
    assertTrue(err.toString(StandardCharsets.UTF_8).contains("unknown workload 'nope'"));
  }

  private static Set<String> fieldNames(JsonNode node) {
    return Set.copyOf(List.copyOf(iterable(node)));
  }

  private static List<String> iterable(JsonNode node) {
    List<String> names = new java.util.ArrayList<>();
    node.fieldNames().forEachRemaining(names::add);
    return names;
  }
}
