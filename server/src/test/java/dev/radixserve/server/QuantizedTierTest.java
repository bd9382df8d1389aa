package dev.radixserve.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.radixserve.model.quant.QuantMode;
import dev.radixserve.server.config.ServerConfig;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The disk tier across a change of quantization: blocks an fp32 server wrote are never served to
 * an int8 server on the same directory (its hash chain is rooted on the model and the
 * quantization), while an int8 server's own blocks come back after its restart.
 */
class QuantizedTierTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient CLIENT = HttpClient.newHttpClient();
  /** About 200 tokens: 12 whole blocks of 16. */
  private static final String PROMPT =
      "You are a careful assistant. Answer in one short line. ".repeat(18) + "Seven times six?";

  @TempDir
  Path dir;

  private static RadixServer start(QuantMode mode, boolean caching, Path tierDir) {
    ServerConfig.Builder b = LocalServers.builder(64);
    b.prefixCaching = caching;
    b.warmup = false;
    b.quantization = mode;
    b.kvOffloadDir = tierDir;
    return RadixServer.start(b.build());
  }

  /** {text, cached tokens} of a greedy completion. */
  private static String[] complete(RadixServer s) throws Exception {
    HttpResponse<String> r = CLIENT.send(HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + s.port() + "/v1/completions"))
        .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"radixserve-embedded-gpt2\","
            + "\"prompt\":" + JSON.writeValueAsString(PROMPT)
            + ",\"max_tokens\":8,\"temperature\":0,\"ignore_eos\":true}")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), r.body());
    JsonNode j = JSON.readTree(r.body());
    return new String[] {j.at("/choices/0/text").asText(),
        j.at("/usage/prompt_tokens_details/cached_tokens").asText()};
  }

  private static String[] once(QuantMode mode, boolean caching, Path tierDir) throws Exception {
    RadixServer s = start(mode, caching, tierDir);
    try {
      return complete(s);
    } finally {
      s.shutdown(Duration.ofSeconds(5)); // with a tier directory: writes the cached blocks
    }
  }

  @Test
  void anFp32ServersBlocksOnDiskAreNotAnInt8ServersPrefix() throws Exception {
    String int8Text = once(QuantMode.INT8, false, null)[0];
    String[] fp32 = once(QuantMode.NONE, true, dir);
    assertEquals("0", fp32[1]);

    String[] int8 = once(QuantMode.INT8, true, dir);
    assertEquals("0", int8[1], "an int8 server must not load the fp32 server's blocks");
    assertEquals(int8Text, int8[0]);

    String[] again = once(QuantMode.INT8, true, dir);
    assertTrue(Integer.parseInt(again[1]) >= 12 * 16, "its own blocks: cached " + again[1]);
    assertEquals(int8Text, again[0], "loaded blocks give the same tokens as computed ones");
  }
}
