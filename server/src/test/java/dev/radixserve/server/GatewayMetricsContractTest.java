package dev.radixserve.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.radixserve.server.config.ServerConfig;
import dev.radixserve.server.engine.EngineSnapshot;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The metrics contract with the gateways: a real server's {@code /metrics}, parsed by
 * prometheus_client's text parser (the one production-stack's router uses), holds every series
 * the shipped picker config reads and production-stack's router reads, with the type they read
 * it as ({@code src/test/resources/gateway/consumers.json} names the source of each list). Then
 * the meaning: after filling the cache and going idle, KV usage reads below 0.1 (cached blocks
 * no request locks count as free, as in vLLM) and the queue reads 0.
 */
class GatewayMetricsContractTest {

  private static final int BLOCKS = 40;
  private static final int B = 4;
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static final Path EPP = Path.of("..", "deploy", "kubernetes", "llm-d", "epp.yaml");
  private static RadixServer server;

  @BeforeAll
  static void start() {
    ServerConfig.Builder b = LocalServers.builder(BLOCKS);
    b.blockSize = B;
    server = RadixServer.start(b.build());
  }

  @AfterAll
  static void stop() {
    server.shutdown(Duration.ofSeconds(5));
  }

  private static JsonNode scrape() throws Exception {
    String out = PythonClients.run(List.of(PythonClients.python(),
        Path.of("src", "test", "gateway", "vllm_consumers.py").toAbsolutePath().toString(),
        "metrics", "http://127.0.0.1:" + server.port() + "/metrics"), Path.of("."));
    return JSON.readTree(out).get("families");
  }

  /** The one sample named {@code sample} in a family of type {@code type}; fails if none. */
  private static JsonNode sample(JsonNode families, String sample, String type) {
    List<String> seen = new ArrayList<>();
    for (JsonNode f : (Iterable<JsonNode>) families::elements) {
      for (JsonNode s : f.get("samples")) {
        if (s.get(0).asText().equals(sample)) {
          assertEquals(type, f.get("type").asText(), sample + "'s family type");
          return s;
        }
      }
    }
    families.fieldNames().forEachRemaining(n -> {
      if (n.startsWith("vllm")) {
        seen.add(n);
      }
    });
    throw new AssertionError("no sample " + sample + " (vllm families: " + seen + ")");
  }

  private static double value(JsonNode families, String sample, String type) {
    return sample(families, sample, type).get(2).asDouble();
  }

  private static void complete(String body) throws Exception {
    HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + server.port() + "/v1/completions"))
        .POST(HttpRequest.BodyPublishers.ofString(body)).build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), r.body());
  }

  /** The shipped picker config reads the extractor's built-in vllm mapping: no override. */
  @Test
  void theShippedPickerConfigUsesTheBuiltInVllmMapping() throws Exception {
    YAMLMapper yaml = new YAMLMapper();
    JsonNode extractor = null;
    for (JsonNode doc : yaml.readerFor(JsonNode.class).readValues(EPP.toFile()).readAll()
        .stream().map(JsonNode.class::cast).toList()) {
      if (doc.path("kind").asText().equals("ConfigMap")) {
        JsonNode epp = yaml.readTree(doc.get("data").get("epp-config.yaml").asText());
        for (JsonNode p : epp.get("plugins")) {
          if (p.get("type").asText().equals("core-metrics-extractor")) {
            extractor = p;
          }
        }
      }
    }
    assertNotNull(extractor, "the picker config has a core-metrics-extractor");
    JsonNode params = extractor.path("parameters");
    assertTrue(params.path("engineConfigs").isMissingNode(), "engineConfigs: the contract list"
        + " in consumers.json covers only the built-in vllm mapping");
    assertEquals("vllm", params.path("defaultEngine").asText("vllm"));
  }

  @Test
  void everySeriesTheGatewaysReadIsThereWithItsTypeAndAnIdleWarmReplicaReadsFree()
      throws Exception {
    // fill the cache: distinct prompts, each leaving its blocks cached and unlocked
    for (int i = 0; i < 6; i++) {
      List<Integer> prompt = new ArrayList<>();
      for (int t = 0; t < 18; t++) {
        prompt.add(1000 + 50 * i + t);
      }
      complete(JSON.createObjectNode().put("model", ServerConfig.EMBEDDED_MODEL_NAME)
          .put("max_tokens", 4).put("temperature", 0).put("ignore_eos", true)
          .putPOJO("prompt", prompt).toString());
      if (i == 0) { // the same prompt again: a prefix-cache hit
        complete(JSON.createObjectNode().put("model", ServerConfig.EMBEDDED_MODEL_NAME)
            .put("max_tokens", 4).put("temperature", 0).putPOJO("prompt", prompt).toString());
      }
    }
    EngineSnapshot snap = server.inspect();
    for (int i = 0; i < 500 && !snap.quiescent(); i++) {
      Thread.sleep(10);
      snap = server.inspect();
    }
    assertTrue(snap.quiescent(), snap.toString());
    JsonNode families = scrape();

    JsonNode consumers = JSON.readTree(
        Path.of("src", "test", "resources", "gateway", "consumers.json").toFile());
    for (JsonNode f : consumers.get("llm-d").get("families")) {
      // llm-d looks families up by the name on their TYPE line, which the parser keeps for gauges
      String name = f.get("name").asText();
      JsonNode family = families.get(name);
      assertNotNull(family, "llm-d reads family " + name);
      assertEquals(f.get("type").asText(), family.get("type").asText(), name);
      for (JsonNode label : f.path("labels")) {
        assertTrue(family.get("samples").get(0).get(1).has(label.asText()), name + "{" + label
            + "}");
      }
    }
    for (JsonNode s : consumers.get("production-stack").get("samples")) {
      sample(families, s.get("name").asText(), s.get("type").asText());
    }

    // the meanings
    JsonNode info = sample(families, "vllm:cache_config_info", "gauge").get(1);
    assertEquals(Integer.toString(B), info.get("block_size").asText());
    assertEquals(Integer.toString(BLOCKS), info.get("num_gpu_blocks").asText());
    double occupancy = value(families, "radixserve_kv_cache_occupancy_ratio", "gauge");
    assertTrue(occupancy > 0.5, "the workload filled the cache: occupancy " + occupancy);
    for (String usage : List.of("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc",
        "radixserve_kv_cache_usage_ratio")) {
      assertTrue(value(families, usage, "gauge") < 0.1, usage + " of a warm idle replica");
    }
    assertEquals(0, value(families, "vllm:num_requests_waiting", "gauge"));
    assertEquals(0, value(families, "vllm:num_requests_running", "gauge"));
    double hits = value(families, "vllm:prefix_cache_hits_total", "counter");
    assertTrue(hits > 0, "the repeated prompt hit");
    assertEquals(value(families, "radixserve_prefix_cache_hit_tokens_total", "counter"), hits);
    assertEquals(hits, value(families, "vllm:gpu_prefix_cache_hits_total", "counter"));
    assertEquals(value(families, "radixserve_prefix_cache_queried_tokens_total", "counter"),
        value(families, "vllm:prefix_cache_queries_total", "counter"));
  }
}
