package dev.radixserve.server.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The Helm chart {@code deploy/helm/radixserve}, by Helm itself (helm-java: Helm v3.21.0 as a
 * native library): {@code helm lint --strict} passes, and {@code helm template} with the default
 * values renders exactly the plain manifests of {@code deploy/kubernetes} (which deploy/check
 * validates against the Kubernetes, Gateway API, InferencePool and picker schemas), so the two
 * cannot drift apart. Changed values reach both the replicas and the picker's config.
 */
class HelmChartTest {

  private static final Path CHART = Path.of("..", "deploy", "helm", "radixserve");
  private static final Path PLAIN = Path.of("..", "deploy", "kubernetes");
  private static final YAMLMapper YAML = new YAMLMapper();

  /** The build carries Helm's native library for linux x86-64 only (what CI runs on). */
  @BeforeAll
  static void helmHasANativeLibraryHere() {
    Assumptions.assumeTrue(System.getProperty("os.name").equals("Linux")
        && List.of("amd64", "x86_64").contains(System.getProperty("os.arch")),
        "helm-java's linux-amd64 library does not run on " + System.getProperty("os.name") + " "
            + System.getProperty("os.arch"));
  }

  @Test
  void helmLintStrictPasses() {
    LintResult lint = new Helm(CHART).lint().strict().call();
    assertFalse(lint.isFailed(), String.join("\n", lint.getMessages()));
  }

  @Test
  void theDefaultValuesRenderThePlainManifests() throws IOException {
    Map<String, JsonNode> rendered = documents(new Helm(CHART).template().withName("radixserve")
        .call());
    Map<String, JsonNode> plain = new TreeMap<>();
    try (Stream<Path> files = Files.walk(PLAIN)) {
      for (Path f : files.filter(p -> p.toString().endsWith(".yaml")).sorted().toList()) {
        plain.putAll(documents(Files.readString(f)));
      }
    }
    assertEquals(plain.keySet(), rendered.keySet());
    for (String key : plain.keySet()) {
      assertEquals(numbersByValue(plain.get(key)), numbersByValue(rendered.get(key)), key);
    }
  }

  @Test
  void valuesReachTheReplicasAndThePicker() throws IOException {
    Map<String, JsonNode> r = documents(new Helm(CHART).template().withName("x")
        .set("blockSize", 32).set("servedModelName", "Qwen/Qwen2.5-0.5B-Instruct")
        .set("kvEvents.port", 6000).call());
    JsonNode env = r.get("Deployment/radixserve").at("/spec/template/spec/containers/0/env");
    Map<String, String> vars = new TreeMap<>();
    env.forEach(e -> vars.put(e.get("name").asText(), e.path("value").asText()));
    assertEquals("32", vars.get("RADIXSERVE_BLOCK_SIZE"));
    assertEquals("tcp://*:6000", vars.get("RADIXSERVE_KV_EVENTS_ENDPOINT"));
    assertEquals("kv@$(POD_IP):8000@Qwen/Qwen2.5-0.5B-Instruct",
        vars.get("RADIXSERVE_KV_EVENTS_TOPIC"));
    JsonNode epp = r.get("ConfigMap/radixserve-epp-config").at("/data/epp-config.yaml");
    Map<String, JsonNode> plugins = new TreeMap<>();
    epp.get("plugins").forEach(p -> plugins.put(p.get("type").asText(), p.path("parameters")));
    assertEquals(32, plugins.get("precise-prefix-cache-producer")
        .at("/tokenProcessorConfig/blockSizeTokens").asInt());
    assertEquals(6000, plugins.get("precise-prefix-cache-producer")
        .at("/kvEventsConfig/podDiscoveryConfig/socketPort").asInt());
    assertEquals("Qwen/Qwen2.5-0.5B-Instruct", plugins.get("token-producer").get("modelName")
        .asText());

    Map<String, JsonNode> replicasOnly = documents(new Helm(CHART).template().withName("x")
        .set("llmd.enabled", false).call());
    assertEquals(java.util.Set.of("Deployment/radixserve", "Service/radixserve"),
        replicasOnly.keySet());
  }

  /**
   * The documents of a YAML stream by {@code kind/name}, the picker config (a string inside a
   * ConfigMap) parsed.
   */
  private static Map<String, JsonNode> documents(String yaml) throws IOException {
    Map<String, JsonNode> docs = new TreeMap<>();
    for (JsonNode doc : YAML.readerFor(JsonNode.class).<JsonNode>readValues(yaml).readAll()) {
      if (doc == null || doc.isNull() || doc.isMissingNode() || doc.isEmpty()) {
        continue;
      }
      if (doc.path("kind").asText().equals("ConfigMap") && doc.at("/data/epp-config.yaml")
          .isTextual()) {
        ((ObjectNode) doc.get("data")).set("epp-config.yaml",
            YAML.readTree(doc.at("/data/epp-config.yaml").asText()));
      }
      docs.put(doc.get("kind").asText() + "/" + doc.at("/metadata/name").asText(), doc);
    }
    return docs;
  }

  /** For comparison: numbers by value (Helm prints 2.0 as 2). */
  private static JsonNode numbersByValue(JsonNode n) {
    if (n.isNumber()) {
      return JsonNodeFactory.instance.textNode(
          "#" + new BigDecimal(n.asText()).stripTrailingZeros().toPlainString());
    }
    if (n.isObject()) {
      ObjectNode out = JsonNodeFactory.instance.objectNode();
      n.properties().forEach(e -> out.set(e.getKey(), numbersByValue(e.getValue())));
      return out;
    }
    if (n.isArray()) {
      var out = JsonNodeFactory.instance.arrayNode();
      n.forEach(e -> out.add(numbersByValue(e)));
      return out;
    }
    return n;
  }
}
