package dev.radixserve.server.tools;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.radixserve.server.RadixServer;
import dev.radixserve.server.config.ServerConfig;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * Cached vs uncached time to first token for a ~1,000-token shared system prompt on the embedded
 * model (max_tokens 1, so the request latency is the TTFT). Each round uses a fresh cache salt
 * for the cold request, then repeats with the same salt and a different question (warm).
 */
public final class TtftBench {

  public static void main(String[] args) throws Exception {
    ServerConfig.Builder b = ServerConfig.builder();
    b.host = "127.0.0.1";
    b.port = 0;
    b.numBlocks = 512;
    RadixServer server = RadixServer.start(b.build());
    HttpClient client = HttpClient.newHttpClient();
    ObjectMapper json = new ObjectMapper();
    String system = "You are a careful assistant. Answer concisely and cite sources. ".repeat(75);
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
    double cold = 0;
    double warm = 0;
    int promptTokens = 0;
    int cached = 0;
    try {
      for (int r = -1; r < rounds; r++) { // round -1 warms the JVM up
        long[] ms = new long[2];
        for (int k = 0; k < 2; k++) {
          String body = "{\"model\":\"radixserve-embedded-gpt2\",\"prompt\":" + json.writeValueAsString(system + "Question " + k + "?")
              + ",\"max_tokens\":1,\"temperature\":0,\"cache_salt\":\"round" + r + "\"}";
          long t0 = System.nanoTime();
          HttpResponse<String> resp = client.send(HttpRequest.newBuilder(
                  URI.create("http://127.0.0.1:" + server.port() + "/v1/completions"))
              .POST(HttpRequest.BodyPublishers.ofString(body)).build(),
              HttpResponse.BodyHandlers.ofString());
          ms[k] = (System.nanoTime() - t0) / 1_000_000;
          if (resp.statusCode() != 200) {
            throw new IllegalStateException(resp.statusCode() + " " + resp.body());
          }
          var j = json.readTree(resp.body());
          promptTokens = j.at("/usage/prompt_tokens").asInt();
          if (k == 1) {
            cached = j.at("/usage/prompt_tokens_details/cached_tokens").asInt();
          }
        }
        if (r >= 0) {
          cold += ms[0];
          warm += ms[1];
        }
      }
      System.out.printf("prompt %d tokens, cached on warm requests %d; mean TTFT over %d rounds:"
          + " uncached %.1f ms, cached %.1f ms%n", promptTokens, cached, rounds, cold / rounds,
          warm / rounds);
    } finally {
      server.shutdown(Duration.ofSeconds(5));
    }
  }
}
