package dev.radixserve.server.cacheview;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.radixserve.server.LocalServers;
import dev.radixserve.server.RadixServer;
import dev.radixserve.server.config.ServerConfig;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Offloaded nodes in the cache view of a real server (embedded model, a 16-block pool, host and
 * disk tiers): a prompt evicted by another shows as one offloaded node in host memory and on
 * disk, in the JSON and on the page (Debian's headless Chromium, when there is one: see {@link
 * CacheViewBrowserTest}); once a repeat has loaded it, it is resident again and the other prompt
 * is the offloaded one.
 */
class OffloadedViewEndToEndTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String SYSTEM = "You are a careful assistant. Answer in one short line. ";
  /** About 200 tokens: 12 whole blocks of 16; the pool holds one such prompt at a time. */
  private static final String PROMPT = SYSTEM.repeat(18) + "What is seven times six?";
  private static final String OTHER =
      "Summarise the following list of fruit: apple, pear, plum. ".repeat(16);
  private static final Duration WAIT = Duration.ofSeconds(60);

  private final HttpClient client = HttpClient.newHttpClient();
  private RadixServer server;

  @TempDir
  Path dir;

  @Test
  void evictedPromptsShowAsOffloadedNodesUntilLoadedBack() throws Exception {
    ServerConfig.Builder b = LocalServers.builder(16);
    b.warmup = false;
    b.kvOffloadMemoryBytes = 64L << 20;
    b.kvOffloadDir = dir;
    // the evicted prompt was never asked again: only write-through puts it on disk as well
    b.kvOffloadDiskWrite = dev.radixserve.server.kvtier.DiskWritePolicy.ALL;
    server = RadixServer.start(b.build());
    Optional<Path> exe = Chromium.find();
    Path artifacts = Path.of("target", "cacheview");
    Files.createDirectories(artifacts);
    try (Chromium page = exe.isEmpty() ? null
        : Chromium.launch(exe.get(), 1400, 900, artifacts.resolve("chromium-offloaded.log"))) {
      run(page);
      if (page != null) {
        page.screenshot(artifacts.resolve("offloaded-test.png"));
      }
    } finally {
      server.shutdown(Duration.ofSeconds(5));
    }
  }

  private void run(Chromium page) throws Exception {
    assertEquals(0, completion(PROMPT));
    completion(OTHER); // PROMPT's leaf evicted: its whole blocks go to host memory and disk
    // the disk writer runs on its own thread: wait for one node in both tiers
    JsonNode tree = treeWhen(t -> depthOne(t, "You are a careful").stream().anyMatch(n ->
        n.path("offloaded").asBoolean() && n.get("media").toString().equals("[\"CPU\",\"DISK\"]")));
    JsonNode prompt = depthOne(tree, "You are a careful").getFirst();
    assertEquals("CPU", prompt.get("medium").asText()); // the faster tier is what a match loads
    assertEquals(0, prompt.get("blocks").asInt());
    int offloaded = prompt.get("offloaded_blocks").asInt();
    assertTrue(offloaded >= 12, prompt.toString());
    assertEquals(offloaded, tree.at("/totals/offloaded_blocks").asInt(), tree.toString());
    assertEquals(1, tree.at("/totals/offloaded_nodes").asInt(), tree.toString());
    JsonNode other = depthOne(tree, "Summarise").getFirst();
    assertFalse(other.has("offloaded"), other.toString());
    assertTrue(other.get("blocks").asInt() >= 12, other.toString());
    assertEquals(tree.at("/totals/blocks").asInt(), tree.at("/pool/cached").asInt());

    if (page != null) {
      page.navigate("http://127.0.0.1:" + server.port() + "/cache");
      page.waitFor("[...document.querySelectorAll('#tree g.node.offloaded')].some(g =>"
          + " g.dataset.medium === 'CPU' && g.querySelector('.label').textContent"
          + ".includes('You are a'))"
          + " && document.getElementById('total-offloaded').textContent === '" + offloaded + "'",
          WAIT, () -> "no offloaded node on the page: " + page.evalText(
              "document.getElementById('tree').textContent"));
      assertFalse(page.eval("[...document.querySelectorAll('#tree g.node.offloaded')].some(g =>"
          + " g.querySelector('.label').textContent.includes('Summarise'))").asBoolean());
    }

    // a repeat loads PROMPT back (evicting OTHER, which is offloaded in its turn)
    assertTrue(completion(PROMPT) >= 12 * 16);
    tree = treeWhen(t -> depthOne(t, "You are a careful").stream()
        .anyMatch(n -> !n.has("offloaded")) && depthOne(t, "Summarise").stream()
        .anyMatch(n -> n.path("offloaded").asBoolean()));
    assertTrue(depthOne(tree, "You are a careful").stream().noneMatch(n -> n.has("offloaded")),
        tree.toString());
    if (page != null) {
      page.waitFor("[...document.querySelectorAll('#tree g.node.offloaded')].some(g =>"
          + " g.querySelector('.label').textContent.includes('Summarise'))"
          + " && [...document.querySelectorAll('#tree g.node:not(.offloaded)')].some(g =>"
          + " g.querySelector('.label').textContent.includes('You are a'))", WAIT,
          () -> "the page does not show the load: " + page.evalText(
              "document.getElementById('tree').textContent"));
    }
  }

  /** The namespace root's children whose text starts with {@code start}. */
  private static List<JsonNode> depthOne(JsonNode tree, String start) {
    List<JsonNode> out = new ArrayList<>();
    for (JsonNode n : tree.get("nodes")) {
      if (n.get("depth").asInt() == 1 && n.get("text").asText().startsWith(start)) {
        out.add(n);
      }
    }
    return out;
  }

  /** GET /cache/tree until {@code done} holds (the view samples every 250 ms at most). */
  private JsonNode treeWhen(Predicate<JsonNode> done) throws Exception {
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (true) {
      HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create(
          "http://127.0.0.1:" + server.port() + "/cache/tree")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertEquals(200, r.statusCode(), r.body());
      JsonNode tree = JSON.readTree(r.body());
      if (done.test(tree)) {
        return tree;
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError("the view never got there: " + tree);
      }
      Thread.sleep(100);
    }
  }

  /** A greedy completion; returns its cached tokens. */
  private int completion(String prompt) throws Exception {
    HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create(
            "http://127.0.0.1:" + server.port() + "/v1/completions"))
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\""
            + ServerConfig.EMBEDDED_MODEL_NAME + "\",\"prompt\":" + JSON.writeValueAsString(prompt)
            + ",\"max_tokens\":8,\"temperature\":0,\"ignore_eos\":true}")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), r.body());
    return JSON.readTree(r.body()).at("/usage/prompt_tokens_details/cached_tokens").asInt();
  }
}
