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
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The page in Debian's headless Chromium against a real server (embedded model, a 64-block pool,
 * an API key): log in, send requests that share a prefix, and check what the page shows. Saves
 * {@code target/cacheview/browser-test.png}. Skips without Chromium unless {@code
 * RADIXSERVE_BROWSER_TESTS} is set (as {@code .ci/run} does), then it fails instead.
 */
class CacheViewBrowserTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String KEY = "browser-test-key";
  /** 40 tokens or more: the shared prefix spans at least two blocks of 16. */
  private static final String SYSTEM = "You are a careful assistant for a garden shop. You answer"
      + " questions about plants, soil, water, light and pests in two short sentences, and you"
      + " never recommend a product by name. Question:";
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final Path ARTIFACTS = Path.of("target", "cacheview");

  private final HttpClient client = HttpClient.newHttpClient();
  private RadixServer server;

  @Test
  void pageShowsSharedPrefixesLocksSearchRequestPathsAndEvictions() throws Exception {
    Optional<Path> exe = Chromium.find();
    if (exe.isEmpty()) {
      if (System.getenv(Chromium.REQUIRED_ENV) != null) {
        throw new AssertionError(Chromium.REQUIRED_ENV + " is set but no Chromium was found"
            + " (install Debian's chromium package, or set RADIXSERVE_CHROMIUM)");
      }
      Assumptions.abort("no Chromium on this machine: the /cache browser test is skipped"
          + " (apt-get install chromium, or set RADIXSERVE_CHROMIUM; CI runs it)");
    }
    ServerConfig.Builder b = LocalServers.builder(64);
    b.apiKey = KEY;
    server = RadixServer.start(b.build());
    Files.createDirectories(ARTIFACTS);
    try (Chromium browser = Chromium.launch(exe.get(), 1400, 900,
        ARTIFACTS.resolve("chromium.log"))) {
      browser.screenshotAfter(() -> run(browser), ARTIFACTS.resolve("browser-test.png"));
    } finally {
      server.shutdown(Duration.ofSeconds(5));
    }
  }

  private void run(Chromium page) throws Exception {
    String base = "http://127.0.0.1:" + server.port();
    // the key: a login form first, then the session cookie opens the page and its stream
    page.navigate(base + "/cache");
    assertTrue(page.eval("!!document.getElementById('login')").asBoolean(), "login form");
    page.eval("document.getElementById('key').value = 'wrong'; "
        + "document.getElementById('login').submit()");
    page.waitFor("document.getElementById('login-error')", WAIT, () -> "no error for a bad key");
    // until its first snapshot arrives the page says "loading…", never "empty", even while
    // events and diffs come in: snapshots are held back here until the cache holds nodes
    page.command("Network.enable", Map.of());
    page.command("Network.setBlockedURLs", Map.of("urls", List.of("*/cache/tree*")));
    page.eval("document.getElementById('key').value = '" + KEY + "'; "
        + "document.getElementById('login').submit()");
    page.waitFor("window.cacheView && window.cacheView.streamLive", WAIT,
        () -> "no event stream after login: " + text(page, "status"));
    completion("Before the first snapshot: a prompt the page hears of but cannot draw yet.", 2,
        false);
    page.waitFor("document.querySelector('#events li.stored')", WAIT,
        () -> "no stored event: " + text(page, "events"));
    assertTrue(page.eval(LOADING_SHOWN).asBoolean(), "not loading: " + text(page, "tree-wrap"));
    assertEquals("–", text(page, "total-nodes"));
    page.command("Network.setBlockedURLs", Map.of("urls", List.of()));
    page.waitFor("document.getElementById('loading').hidden"
        + " && Number(document.getElementById('total-nodes').textContent) > 0"
        + " && document.getElementById('status').textContent === 'live'", WAIT,
        () -> "no snapshot after unblocking: " + text(page, "tree-wrap") + " / "
            + text(page, "status"));
    assertTrue(page.eval("document.getElementById('empty').hidden").asBoolean());
    // emptied: now "empty" is the truth; the events the reset caused are cleared from the list
    assertEquals(200, client.send(HttpRequest.newBuilder(URI.create(
            "http://127.0.0.1:" + server.port() + "/reset_prefix_cache"))
        .header("Authorization", "Bearer " + KEY).POST(HttpRequest.BodyPublishers.noBody())
        .build(), HttpResponse.BodyHandlers.ofString()).statusCode());
    page.waitFor("document.getElementById('total-nodes').textContent === '0'"
        + " && !document.getElementById('empty').hidden", WAIT,
        () -> "not empty after the reset: " + text(page, "total-nodes"));
    assertTrue(page.eval("document.getElementById('loading').hidden").asBoolean());
    page.eval("document.getElementById('events').replaceChildren()");

    // two prompts sharing the system prompt and more: one node for the shared whole blocks; under
    // it the first prompt's next block (where the second one's match ends, token-granular, inside
    // it) with the first request's output, and the second request's partial prompt tail and its
    // prompt + output (partial leaves stay in the tree): 5 nodes, the shared one with 3 children
    completion(SYSTEM + " How often should I water a cactus?", 4, false);
    String second = completion(SYSTEM + " Which soil suits tomatoes best?", 4, false);
    page.waitFor("document.getElementById('total-nodes').textContent === '5'"
        + " && document.querySelectorAll('#tree g.node:not(.root):not(.more)').length === 5",
        WAIT, () -> "expected 5 nodes, page shows " + text(page, "total-nodes"));
    JsonNode shared = page.eval("""
        (() => {
          const g = [...document.querySelectorAll('#tree g.node[data-children="3"]')]
            .find((n) => !n.classList.contains('root'));
          if (!g) return null;
          const kids = document.querySelectorAll(`#tree g.node[data-parent="${g.dataset.id}"]`);
          return { id: g.dataset.id, tokens: Number(g.dataset.tokens), kids: kids.length,
                   label: g.querySelector('.label').textContent };
        })()""");
    assertEquals(3, shared.path("kids").asInt(), "shared prefix node: " + shared);
    assertTrue(shared.path("label").asText().startsWith("“You are a "), shared.toString());
    assertEquals(0, shared.path("tokens").asInt() % 16, shared.toString());
    assertTrue(shared.path("tokens").asInt() >= 32, shared.toString());

    // the second request's match ends inside the block under the shared node that it copies
    // from: highlight its path by request id; the page agrees with the server's record
    JsonNode matchRecord = JSON.readTree(get("/cache/tree?request=" + second).body())
        .at("/request/matches/0");
    int matchedTokens = matchRecord.get("matched_tokens").asInt();
    assertTrue(matchedTokens > shared.path("tokens").asInt() && matchedTokens % 16 != 0,
        matchRecord.toString());
    assertEquals(3, matchRecord.get("path").size(), matchRecord.toString());
    assertEquals(shared.path("id").asText(), matchRecord.get("path").get(1).asText());
    page.eval("document.getElementById('request').value = '" + second + "'; "
        + "document.getElementById('highlight').click()");
    page.waitFor("document.querySelector('#tree g.node.match-end')", WAIT,
        () -> "no highlighted match: " + text(page, "request-result"));
    assertEquals(matchRecord.get("node").asText(),
        page.eval("document.querySelector('#tree g.node.match-end').dataset.id").asText());
    assertEquals(shared.path("id").asText(),
        page.eval("document.querySelector('#tree g.node.match-end').dataset.parent").asText());
    assertTrue(text(page, "request-result").contains("matched " + matchedTokens + " of"),
        text(page, "request-result"));
    assertEquals(3, page.eval("document.querySelectorAll('#tree g.node.on-path').length")
        .asInt(), "root, shared node and copy source on the path");
    // the toolbar keeps one row in a 1,400-px window, the long match note included
    JsonNode bar = page.eval(TOOLBAR);
    assertEquals(1, bar.path("rows").asInt(), bar.toString());
    assertTrue(bar.path("right").asDouble() <= bar.path("width").asDouble(), bar.toString());

    // search by text finds the edges holding the question: the second request's prompt tail and
    // its prompt + output, both under the shared node
    page.eval("const s = document.getElementById('search'); s.value = 'tomatoes';"
        + " s.dispatchEvent(new Event('input'))");
    page.waitFor("document.querySelectorAll('#tree g.node.match').length === 2", WAIT,
        () -> "search: " + text(page, "search-result"));
    assertTrue(page.eval("[...document.querySelectorAll('#tree g.node.match')].every((g) =>"
        + " g.dataset.parent === '" + shared.path("id").asText() + "')").asBoolean());
    assertEquals("2 edges match", text(page, "search-result"));

    // a lock while a stream runs, none after it
    AtomicBoolean done = new AtomicBoolean();
    CompletableFuture<Void> stream = stream(SYSTEM + " Can basil grow indoors in winter?", 800,
        done);
    page.waitFor("document.querySelectorAll('#tree g.node.locked').length > 0"
        + " && Number(document.getElementById('total-locked').textContent) > 0", WAIT,
        () -> "no lock shown while streaming");
    assertFalse(done.get(), "the page showed the lock only after the stream had finished");
    assertTrue(page.eval("[...document.querySelectorAll('#tree g.node.locked')]"
        + ".every((g) => Number(g.dataset.lock) >= 1)").asBoolean());
    stream.get();
    page.waitFor("document.querySelectorAll('#tree g.node.locked').length === 0"
        + " && document.getElementById('total-locked').textContent === '0'", WAIT,
        () -> "locks still shown after the stream: " + text(page, "total-locked"));

    // the pool (64 blocks) is nearly full of cached blocks now: a long new prompt evicts
    completion("A different topic entirely: the history of tea. ".repeat(40), 8, false);
    page.waitFor("document.querySelector('#events li.evicted')", WAIT,
        () -> "no eviction listed: " + page.evalText("document.getElementById('events')"
            + ".textContent.slice(0, 400)"));
    String evicted = page.eval("document.querySelector('#events li.evicted').dataset.node")
        .asText();
    page.waitFor("!document.querySelector('#tree g.node[data-id=\"" + evicted + "\"]')", WAIT,
        () -> "evicted node #" + evicted + " still drawn");
    // what the page shows agrees with the server's own snapshot, once that shows the last
    // request finished (a snapshot may be a tick old)
    JsonNode tree = settledTree();
    page.waitFor("document.getElementById('total-nodes').textContent === '"
        + tree.at("/totals/nodes").asInt() + "'", WAIT, () -> "node count differs from the"
        + " server's " + tree.at("/totals/nodes") + ": " + text(page, "total-nodes"));
    assertTrue(tree.at("/stats/evicted_blocks").asInt() > 0, tree.at("/stats").toString());
    assertEquals(0, tree.at("/totals/locked").asInt());

    // a deep tree: each prompt extends the previous one by a block or more, so every request
    // branches one level deeper; highlighting the last one scrolls its column into view, and
    // its label is drawn whole (the SVG is wide enough for the deepest column's text)
    StringBuilder prompt = new StringBuilder("The keeper's log, one entry after another.");
    String deepest = null;
    for (int step = 0; step < 8; step++) {
      prompt.append(" Entry ").append(step).append(": the keeper lit the lamp, wound the clock"
          + " and wrote down the wind, the tide and the ships.");
      deepest = completion(prompt.toString(), 2, false);
    }
    page.eval("document.getElementById('request').value = '" + deepest + "'; "
        + "document.getElementById('highlight').click()");
    page.waitFor("document.querySelector('#tree g.node.match-end')", WAIT,
        () -> "no highlighted match for the deepest request: " + text(page, "request-result"));
    page.waitFor(DEEP_LABEL_SHOWN, WAIT, () -> "deepest label not in view: "
        + page.evalText("JSON.stringify(" + DEEP_LABEL + ")"));
    JsonNode deep = page.eval(DEEP_LABEL);
    assertTrue(deep.path("scrollWidth").asDouble() > deep.path("clientWidth").asDouble(),
        "the tree should be wider than the window here: " + deep);
    bar = page.eval(TOOLBAR);
    assertEquals(1, bar.path("rows").asInt(), bar.toString());
  }

  private static final String LOADING_SHOWN = "!document.getElementById('loading').hidden"
      + " && document.getElementById('empty').hidden"
      + " && document.getElementById('loading').textContent.startsWith('loading…')";

  /** Rows the toolbar's controls take, and how far right the last one reaches. */
  private static final String TOOLBAR = """
      (() => {
        const items = [...document.getElementById('controls').children]
          .filter((e) => !e.classList.contains('note'));
        const rects = items.map((e) => e.getBoundingClientRect());
        // one row: every control overlaps every other vertically
        const oneRow = Math.max(...rects.map((r) => r.top))
          < Math.min(...rects.map((r) => r.bottom));
        return { rows: oneRow ? 1 : 2,
                 right: Math.max(...rects.map((r) => r.right)), width: window.innerWidth };
      })()""";

  /** Where the highlighted match's label lies against the scrolled tree and the SVG. */
  private static final String DEEP_LABEL = """
      (() => {
        const wrap = document.getElementById('tree-wrap');
        const g = document.querySelector('#tree g.node.match-end');
        if (!g) return null;
        const label = g.querySelector('.meta').getBoundingClientRect();
        const name = g.querySelector('.label').getBoundingClientRect();
        const w = wrap.getBoundingClientRect();
        const svg = document.getElementById('tree').getBoundingClientRect();
        return { left: Math.min(label.left, name.left), right: Math.max(label.right, name.right),
                 wrapLeft: w.left, wrapRight: w.left + wrap.clientWidth, svgRight: svg.right,
                 scrollWidth: wrap.scrollWidth, clientWidth: wrap.clientWidth };
      })()""";

  private static final String DEEP_LABEL_SHOWN = "(() => { const d = " + DEEP_LABEL + ";"
      + " return d && d.left >= d.wrapLeft && d.right <= d.wrapRight && d.right <= d.svgRight;"
      + " })()";

  private JsonNode settledTree() throws Exception {
    long deadline = System.nanoTime() + WAIT.toNanos();
    JsonNode tree = JSON.readTree(get("/cache/tree").body());
    while (tree.at("/totals/locked").asInt() > 0 && System.nanoTime() < deadline) {
      Thread.sleep(100);
      tree = JSON.readTree(get("/cache/tree").body());
    }
    return tree;
  }

  private String text(Chromium page, String id) {
    return page.evalText("document.getElementById('" + id + "').textContent");
  }

  /** Sends a completion with the API key; returns the response id. */
  private String completion(String prompt, int maxTokens, boolean ignoreEos) throws Exception {
    HttpResponse<String> r = client.send(post(prompt, maxTokens, false, ignoreEos),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), r.body());
    return JSON.readTree(r.body()).get("id").asText();
  }

  /** Streams a completion on another thread; {@code done} turns true at {@code [DONE]}. */
  private CompletableFuture<Void> stream(String prompt, int maxTokens, AtomicBoolean done)
      throws Exception {
    HttpResponse<Stream<String>> r = client.send(post(prompt, maxTokens, true, true),
        HttpResponse.BodyHandlers.ofLines());
    assertEquals(200, r.statusCode());
    return CompletableFuture.runAsync(() -> {
      try (Stream<String> lines = r.body()) {
        lines.filter(l -> l.equals("data: [DONE]")).findFirst().ifPresent(l -> done.set(true));
      }
      if (!done.get()) {
        throw new AssertionError("stream ended without [DONE]");
      }
    });
  }

  private HttpRequest post(String prompt, int maxTokens, boolean stream, boolean ignoreEos)
      throws Exception {
    String body = "{\"model\":\"" + ServerConfig.EMBEDDED_MODEL_NAME + "\",\"prompt\":"
        + JSON.writeValueAsString(prompt) + ",\"max_tokens\":"
        + maxTokens + ",\"temperature\":0,\"stream\":" + stream + ",\"ignore_eos\":" + ignoreEos
        + "}";
    return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port()
            + "/v1/completions"))
        .header("Authorization", "Bearer " + KEY).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body)).build();
  }

  private HttpResponse<String> get(String path) throws Exception {
    return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port()
            + path)).header("Authorization", "Bearer " + KEY).build(),
        HttpResponse.BodyHandlers.ofString());
  }
}
