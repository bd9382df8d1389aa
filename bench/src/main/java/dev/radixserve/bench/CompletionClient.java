package dev.radixserve.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * Client of an OpenAI-compatible server: lists models and streams one completion per call, timing
 * every chunk as it is read. Thread-safe; one instance serves all concurrent requests of a run.
 */
final class CompletionClient implements RequestSender {

  private static final ObjectMapper JSON = new ObjectMapper();

  private final HttpClient http;
  private final URI baseUrl;
  private final String apiKey;
  private final String model;
  private final int maxTokens;
  private final Duration timeout;
  private final long runStartNanos;

  CompletionClient(HttpClient http, URI baseUrl, String apiKey, String model, int maxTokens,
      Duration timeout, long runStartNanos) {
    this.http = http;
    this.baseUrl = baseUrl;
    this.apiKey = apiKey;
    this.model = model;
    this.maxTokens = maxTokens;
    this.timeout = timeout;
    this.runStartNanos = runStartNanos;
  }

  static HttpClient newHttpClient() {
    // HTTP/1.1: servers like ours speak plain HTTP/1.1 and an h2c upgrade would only add a trip.
    return HttpClient.newBuilder()
        .version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(10))
        .build();
  }

  /** The first model id that {@code GET /v1/models} lists. */
  static String firstModelId(HttpClient http, URI baseUrl, String apiKey)
      throws IOException, InterruptedException {
    HttpRequest.Builder b = HttpRequest.newBuilder(baseUrl.resolve("/v1/models"))
        .timeout(Duration.ofSeconds(30)).GET();
    authorize(b, apiKey);
    HttpResponse<String> response = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    if (response.statusCode() != 200) {
      throw new IOException("GET " + baseUrl.resolve("/v1/models") + " answered "
          + response.statusCode() + ": " + response.body());
    }
    JsonNode data = JSON.readTree(response.body()).path("data");
    if (!data.isArray() || data.isEmpty() || !data.get(0).hasNonNull("id")) {
      throw new IOException("GET /v1/models listed no model: " + response.body());
    }
    return data.get(0).get("id").asText();
  }

  /** The JSON body of one streamed completion with a token-id prompt. */
  /**
   * {@code POST /reset_prefix_cache} (vLLM's and SGLang's route, ours too): frees every cached
   * block no request holds.
   *
   * @return the HTTP status: 200 when the server emptied its cache
   */
  static int resetPrefixCache(HttpClient http, URI baseUrl, String apiKey)
      throws IOException, InterruptedException {
    HttpRequest.Builder b = HttpRequest.newBuilder(baseUrl.resolve("/reset_prefix_cache"))
        .timeout(Duration.ofSeconds(30)).POST(HttpRequest.BodyPublishers.noBody());
    authorize(b, apiKey);
    return http.send(b.build(), HttpResponse.BodyHandlers.discarding()).statusCode();
  }

  static String requestBody(String model, int[] prompt, int maxTokens) {
    ObjectNode body = JSON.createObjectNode();
    body.put("model", model);
    var ids = body.putArray("prompt");
    for (int id : prompt) {
      ids.add(id);
    }
    body.put("max_tokens", maxTokens);
    body.put("temperature", 0);
    body.put("stream", true);
    body.putObject("stream_options").put("include_usage", true);
    body.put("ignore_eos", true);
    return body.toString();
  }

  @Override
  public RequestRecord send(BenchRequest request, int sendOrder) {
    long start = System.nanoTime();
    HttpRequest.Builder b = HttpRequest.newBuilder(baseUrl.resolve("/v1/completions"))
        .timeout(timeout)
        .header("Content-Type", "application/json")
        .header("Accept", "text/event-stream")
        .POST(HttpRequest.BodyPublishers.ofString(requestBody(model, request.prompt(), maxTokens)));
    authorize(b, apiKey);
    StreamAccumulator stream = new StreamAccumulator(start);
    try {
      HttpResponse<InputStream> response =
          http.send(b.build(), HttpResponse.BodyHandlers.ofInputStream());
      try (InputStream in = response.body()) {
        if (response.statusCode() != 200) {
          String body = new String(in.readAllBytes(), StandardCharsets.UTF_8);
          return RequestRecord.failed(request, sendOrder,
              "HTTP " + response.statusCode() + ": " + body.strip(),
              (start - runStartNanos) / 1e6, (System.nanoTime() - start) / 1e6);
        }
        readStream(in, stream);
      }
    } catch (IOException e) {
      stream.fail(e.getClass().getSimpleName() + ": " + e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      stream.fail("interrupted");
    }
    return stream.toRecord(request, sendOrder, runStartNanos, System.nanoTime());
  }

  /** Feeds the body to the parser read by read, stamping each event with its arrival time. */
  static void readStream(InputStream in, StreamAccumulator stream) throws IOException {
    SseParser parser = new SseParser();
    byte[] buffer = new byte[8192];
    int n;
    while ((n = in.read(buffer)) > 0) {
      long now = System.nanoTime();
      for (String data : parser.feed(buffer, 0, n)) {
        stream.accept(data, now);
      }
    }
    long now = System.nanoTime();
    for (String data : parser.finish()) {
      stream.accept(data, now);
    }
  }

  private static void authorize(HttpRequest.Builder b, String apiKey) {
    if (apiKey != null && !apiKey.isBlank()) {
      b.header("Authorization", "Bearer " + apiKey);
    }
  }
}
