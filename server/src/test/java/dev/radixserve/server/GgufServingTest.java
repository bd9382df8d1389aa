package dev.radixserve.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.radixserve.model.gguf.GgufModelLoader;
import dev.radixserve.model.quant.QuantMode;
import dev.radixserve.server.config.ServerConfig;
import dev.radixserve.server.engine.EngineSnapshot;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code serve --model FILE.gguf} on a file llama.cpp's converter wrote (model-runtime's {@code
 * gguf/make_fixtures.py}): /v1/models names the file, greedy completions over HTTP give
 * transformers' logprobs on the checkpoint the file was converted from, cache on and off alike,
 * and the cache identity carries the file's identity.
 */
class GgufServingTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient CLIENT = HttpClient.newHttpClient();
  static final Path FIXTURES = Path.of("..", "model-runtime", "src", "test", "resources", "gguf");

  @TempDir Path tmp;

  /**
   * Llama 3; Phi-3 with its fused projections split, longrope's long factors (every prompt is
   * past the file's original context) over 3/4 of each head; Gemma 2 (soft-caps, a window on
   * every other layer) and Gemma 3 (q/k norms, a window on five layers in six, two ropes).
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource({"llama3-f32.gguf, llama3-expected.json",
      "phi3-long-f32.gguf, phi3-long-expected.json", "gemma2-f32.gguf, gemma2-expected.json",
      "gemma3-f32.gguf, gemma3-expected.json"})
  void servesTheFileUnderItsNameAsTransformersComputesIt(String name, String reference)
      throws Exception {
    Path file = FIXTURES.resolve(name);
    assertTrue(Files.isRegularFile(file), file.toAbsolutePath().toString());
    JsonNode expected = JSON.readTree(FIXTURES.resolve(reference).toFile());
    String off = null;
    for (boolean caching : new boolean[] {false, true}) {
      ServerConfig.Builder b = LocalServers.builder(64);
      b.model = file;
      b.blockSize = 4;
      b.prefixCaching = caching;
      RadixServer s = RadixServer.start(b.build());
      try {
        JsonNode models = JSON.readTree(get(s, "/v1/models"));
        assertEquals(name, models.at("/data/0/id").asText(), models.toString());
        assertEquals(file.toString(), models.at("/data/0/root").asText(), models.toString());
        StringBuilder texts = new StringBuilder();
        for (int round = 0; round < (caching ? 2 : 1); round++) {
          for (JsonNode run : expected.get("runs")) {
            JsonNode r = complete(s, name, run.get("prompt").asText(), run.get("steps").size(),
                1);
            JsonNode lp = r.at("/choices/0/logprobs/token_logprobs");
            JsonNode steps = run.get("steps");
            for (int i = 0; i < steps.size(); i++) {
              JsonNode top = steps.get(i).get("top_logprobs");
              assertTrue(top.get(0).asDouble() - top.get(1).asDouble() > 1e-3, "a near-tie");
              assertEquals(top.get(0).asDouble(), lp.get(i).asDouble(), 1e-4, "step " + i);
            }
            texts.append(r.at("/choices/0/text").asText()).append('\u0000');
          }
        }
        EngineSnapshot snap = s.inspect();
        assertNull(snap.integrityError());
        if (off == null) {
          off = texts.toString();
        } else {
          assertEquals(off + off, texts.toString(), "cache on equals cache off");
        }
      } finally {
        s.shutdown(Duration.ofSeconds(5));
      }
    }
  }

  /**
   * A K-quant mix under an explicit {@code quantization: none} serves the file's dequantized
   * weights at fp32: every greedy step's top-5 logprobs within 1e-4 of transformers on those
   * weights. Left at auto, the same file is requantized (to int8) and its logprobs move.
   */
  @Test
  void anExplicitNoneServesAKQuantFileAtFp32() throws Exception {
    Path file = FIXTURES.resolve("llama3-wide-q4_k_m.gguf");
    JsonNode expected = JSON.readTree(FIXTURES.resolve("llama3-wide-q4_k_m-expected.json")
        .toFile());
    for (QuantMode mode : new QuantMode[] {QuantMode.NONE, null}) {
      ServerConfig.Builder b = LocalServers.builder(64);
      b.model = file;
      b.quantization = mode;
      RadixServer s = RadixServer.start(b.build());
      double worst = 0;
      try {
        for (JsonNode run : expected.get("runs")) {
          JsonNode steps = run.get("steps");
          JsonNode r = complete(s, "llama3-wide-q4_k_m.gguf", run.get("prompt").asText(),
              steps.size(), 5);
          JsonNode top = r.at("/choices/0/logprobs/top_logprobs");
          for (int i = 0; i < steps.size(); i++) {
            List<Double> served = new ArrayList<>();
            top.get(i).forEach(v -> served.add(v.asDouble()));
            served.sort(java.util.Comparator.reverseOrder());
            JsonNode want = steps.get(i).get("top_logprobs");
            assertEquals(want.size(), served.size(), "step " + i + ": " + top.get(i));
            for (int k = 0; k < want.size(); k++) {
              worst = Math.max(worst, Math.abs(want.get(k).asDouble() - served.get(k)));
            }
          }
        }
      } finally {
        s.shutdown(Duration.ofSeconds(5));
      }
      if (mode == QuantMode.NONE) {
        assertTrue(worst <= 1e-4, "fp32: largest |Δ logprob| " + worst);
      } else {
        assertTrue(worst > 1e-3, "auto requantizes: largest |Δ logprob| " + worst);
      }
    }
  }

  @Test
  void theCacheIdentityCarriesTheFilesIdentity() throws Exception {
    Path file = tmp.resolve("model.gguf");
    Files.copy(FIXTURES.resolve("qwen2-q8_0.gguf"), file);
    ServerConfig.Builder b = LocalServers.builder(16);
    b.model = file;
    b.device = dev.radixserve.model.Device.Kind.CPU;
    b.dtype = null;
    ServerConfig c = b.build();
    String key = RadixServer.cacheModelKey(c, c.quantization());
    assertEquals("model.gguf#" + GgufModelLoader.identity(file), key);
    Files.setLastModifiedTime(file, FileTime.fromMillis(Files.getLastModifiedTime(file)
        .toMillis() + 1000));
    assertNotEquals(key, RadixServer.cacheModelKey(c, c.quantization()),
        "a file rewritten under the same name never reuses the old KV");
  }

  private static String get(RadixServer s, String path) throws Exception {
    HttpResponse<String> r = CLIENT.send(HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + s.port() + path)).build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), r.body());
    return r.body();
  }

  private static JsonNode complete(RadixServer s, String model, String prompt, int tokens,
      int logprobs) throws Exception {
    HttpResponse<String> r = CLIENT.send(HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + s.port() + "/v1/completions"))
        .POST(HttpRequest.BodyPublishers.ofString("{\"model\":" + JSON.writeValueAsString(model)
            + ",\"prompt\":"
            + JSON.writeValueAsString(prompt) + ",\"max_tokens\":" + tokens
            + ",\"temperature\":0,\"ignore_eos\":true,\"logprobs\":" + logprobs + "}")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), r.body());
    return JSON.readTree(r.body());
  }
}
