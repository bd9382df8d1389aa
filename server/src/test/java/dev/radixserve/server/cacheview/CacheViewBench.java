package dev.radixserve.server.cacheview;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.radixserve.cache.BlockPool;
import dev.radixserve.cache.EvictionPolicy;
import dev.radixserve.cache.RadixCache;
import dev.radixserve.cache.TreeSnapshot;
import dev.radixserve.model.Tokenizer;
import dev.radixserve.model.tokenizer.TokenizerLoader;
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
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;

/**
 * Is the page usable with 10,000 cached sequences? Fills a real server (embedded model) with
 * {@code sequences} prompts that share system prompts and few-shot preambles (20 × 10 × 50),
 * opens {@code /cache} in headless Chromium and measures, in the browser, the time to draw the
 * tree at each node budget, a search, and the page's worst main-thread stall while another 1,000
 * requests stream changes in. Also times, without the model, the engine-thread snapshot and the
 * view's build, select and diff on a cache of the same prompts.
 *
 * <p>Run as docs/benchmarks/journal/2026-11-21-to-28.md says: {@code CacheViewBench [sequences, default 10000] [--offline]}.
 */
public final class CacheViewBench {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final int WARMUP = 50;
  private static final int ROUNDS = 50;

  public static void main(String[] args) throws Exception {
    int sequences = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
    List<String> prompts = prompts(sequences, 0);
    offline(prompts);
    if (!List.of(args).contains("--offline")) {
      online(prompts);
    }
  }

  /** 20 system prompts × 10 preambles × 50 questions (then more questions past 10,000). */
  static List<String> prompts(int n, int offset) {
    List<String> out = new ArrayList<>(n);
    for (int i = offset; i < offset + n; i++) {
      int system = i % 20;
      int preamble = (i / 20) % 10;
      int question = i / 200;
      // about 85 tokens: the question's own tokens fill at least one whole block of 16
      out.add("System prompt " + system + ": you are assistant number " + system + " of the"
          + " radix cache benchmark; answer briefly and precisely, in plain English. Preamble "
          + preamble + ": the examples follow the format of set " + preamble + ", one line"
          + " each. Question " + question + ": what are the colour, size and price of item "
          + (question * 7919 % 100_000) + " in table " + question + ", and who supplies it?");
    }
    return out;
  }

  /** Engine-thread snapshot and view-thread build/select/diff on the same prompts (no model). */
  private static void offline(List<String> prompts) {
    Tokenizer tokenizer = TokenizerLoader.standard();
    int b = 16;
    int blocks = 0;
    List<int[]> tokenized = new ArrayList<>();
    for (String p : prompts) {
      int[] t = tokenizer.encode(p);
      tokenized.add(t);
      blocks += t.length / b;
    }
    BlockPool pool = new BlockPool(blocks);
    RadixCache cache = new RadixCache(pool, b, EvictionPolicy.lru());
    CacheRecorder recorder = new CacheRecorder();
    cache.addListener(recorder);
    for (int[] t : tokenized) {
      int full = t.length / b;
      var m = cache.matchPrefix(t, full * b, "");
      int[] ids = Arrays.copyOf(m.blockIds(), full);
      int fresh = full - m.blockIds().length;
      int[] got = pool.allocate(fresh);
      System.arraycopy(got, 0, ids, m.blockIds().length, fresh);
      cache.insert(t, ids, "");
    }
    EdgeTexts texts = new EdgeTexts(tokenizer::decode);
    TreeSnapshot snap = null;
    long[] snapNs = new long[ROUNDS];
    for (int i = -WARMUP; i < snapNs.length; i++) {
      long t0 = System.nanoTime();
      snap = cache.snapshot();
      if (i >= 0) {
        snapNs[i] = System.nanoTime() - t0;
      }
    }
    CacheSample sample = new CacheSample(1, 0, 0, b, snap, cache.stats(), 0);
    CacheTree first = CacheTree.build(sample, texts); // decodes every edge once
    long[] buildNs = new long[ROUNDS];
    long[] selectNs = new long[ROUNDS];
    long[] diffNs = new long[ROUNDS];
    CacheTree tree = first;
    for (int i = -WARMUP; i < buildNs.length; i++) {
      long t0 = System.nanoTime();
      tree = CacheTree.build(new CacheSample(i + 2, 0, 0, b, snap, cache.stats(), 0), texts);
      long t1 = System.nanoTime();
      TreeJson.tree(tree, TreeQuery.parse(Map.of()).select(tree, List.of())).toString();
      long t2 = System.nanoTime();
      TreeJson.diff(first, tree, Integer.MAX_VALUE);
      long t3 = System.nanoTime();
      if (i >= 0) {
        buildNs[i] = t1 - t0;
        selectNs[i] = t2 - t1;
        diffNs[i] = t3 - t2;
      }
    }
    System.out.printf("offline: %d sequences, %d nodes, %d blocks; ms (median / p90 of %d after"
        + " %d warm-up): engine-thread snapshot %s, view build %s, select+JSON (500 nodes) %s,"
        + " full diff %s%n", prompts.size(), cache.stats().nodes(), cache.cachedBlocks(), ROUNDS,
        WARMUP, quantiles(snapNs), quantiles(buildNs), quantiles(selectNs), quantiles(diffNs));
  }

  private static String quantiles(long[] ns) {
    long[] s = ns.clone();
    Arrays.sort(s);
    return String.format("%.2f / %.2f", s[s.length / 2] / 1e6, s[s.length * 9 / 10] / 1e6);
  }

  private static void online(List<String> prompts) throws Exception {
    ServerConfig.Builder cfg = ServerConfig.builder();
    cfg.host = "127.0.0.1";
    cfg.port = 0;
    cfg.numBlocks = prompts.size() * 3 / 2 + 4096;
    // One ONNX Runtime thread: a viewer's browser normally runs on another machine; here it
    // shares 2 cores with the server, so the server leaves it one.
    cfg.threads = 1;
    RadixServer server = RadixServer.start(cfg.build());
    HttpClient client = HttpClient.newHttpClient();
    String base = "http://127.0.0.1:" + server.port();
    Path out = Path.of("target", "cacheview");
    Files.createDirectories(out);
    try {
      long t0 = System.nanoTime();
      send(client, base, prompts, 16);
      System.out.printf("loaded %d sequences in %.1f s%n", prompts.size(),
          (System.nanoTime() - t0) / 1e9);
      JsonNode totals = JSON.readTree(client.send(HttpRequest.newBuilder(
          URI.create(base + "/cache/tree?max_nodes=1")).build(),
          HttpResponse.BodyHandlers.ofString()).body()).get("totals");
      System.out.println("cache: " + totals);
      try (Chromium page = Chromium.launch(Chromium.find().orElseThrow(), 1600, 1000,
          out.resolve("bench-chromium.log"))) {
        page.navigate(base + "/cache");
        page.waitFor("window.cacheView && cacheView.stats.renders > 0 && cacheView.stats.shown > 1",
            Duration.ofSeconds(60), () -> "page never drew the tree");
        Thread.sleep(1000);
        System.out.println("budget  shown  fetch ms  render ms  to next frame ms");
        for (int budget : new int[] {100, 300, 1000, 3000, 5000}) {
          JsonNode s = render(page, budget);
          System.out.printf("%6d  %5d  %8.1f  %9.1f  %16.1f%n", budget,
              s.get("shown").asInt(), s.get("lastFetchMs").asDouble(),
              s.get("lastRenderMs").asDouble(), s.get("lastFrameMs").asDouble());
          if (budget == 3000) {
            page.screenshot(out.resolve("bench-3000.png"));
          }
        }
        render(page, 300);
        page.eval("""
            (() => { window.lag = 0; window.longTasks = []; let last = performance.now();
              window.lagTimer = setInterval(() => { const now = performance.now();
                window.lag = Math.max(window.lag, now - last - 50); last = now; }, 50);
              new PerformanceObserver((l) => l.getEntries().forEach((e) =>
                window.longTasks.push(e.duration))).observe({ type: 'longtask' });
              cacheView.recentMs.length = 0; })()""");
        page.command("Performance.enable", Map.of());
        Map<String, Double> before = metrics(page);
        long renders = page.eval("cacheView.stats.renders").asLong();
        long tl = System.nanoTime();
        send(client, base, prompts(1000, prompts.size()), 8);
        Thread.sleep(1500);
        double wall = (System.nanoTime() - tl) / 1e9;
        Map<String, Double> after = metrics(page);
        JsonNode live = page.eval("({ lag: window.lag, renders: cacheView.stats.renders,"
            + " frames: [...cacheView.recentMs].sort((a, b) => a - b), diffs:"
            + " cacheView.stats.diffs, refetches: cacheView.stats.refetches, longTasks:"
            + " window.longTasks.length, longest: Math.max(0, ...window.longTasks) })");
        JsonNode frames = live.get("frames");
        System.out.printf("live: 1,000 more requests over %.1f s (wall; load average %s): %d"
            + " frames drawn, frame ms p50 %.1f / p95 %.1f / max %.1f; page main thread: %.1f s"
            + " CPU, %.1f s in tasks (wall) of %.1f s (script %.1f, style %.1f, layout %.1f);"
            + " %d long tasks (> 50 ms), longest %.0f ms; worst 50 ms-timer delay %.0f ms; %d"
            + " diffs, %d tree fetches%n", wall, Files.readString(Path.of("/proc/loadavg"))
                .substring(0, 14), live.get("renders").asLong() - renders, at(frames, 0.5),
            at(frames, 0.95), at(frames, 1.0), delta(before, after, "ThreadTime"),
            delta(before, after, "TaskDuration"), wall,
            delta(before, after, "ScriptDuration"), delta(before, after, "RecalcStyleDuration"),
            delta(before, after, "LayoutDuration"), live.get("longTasks").asInt(),
            live.get("longest").asDouble(), live.get("lag").asDouble(),
            live.get("diffs").asInt(), live.get("refetches").asInt());
        long ts = System.nanoTime();
        page.eval("const s = document.getElementById('search'); s.value = 'Question 37:';"
            + " s.dispatchEvent(new Event('input'))");
        page.waitFor("document.querySelector('#tree g.node.match')", Duration.ofSeconds(30),
            () -> "search found nothing");
        System.out.printf("search 'Question 37:' shown after %.0f ms (300 ms debounce included):"
            + " %s%n", (System.nanoTime() - ts) / 1e6, page.evalText(
                "document.getElementById('search-result').textContent"));
        page.screenshot(out.resolve("bench-300.png"));
      }
    } finally {
      server.shutdown(Duration.ofSeconds(5));
    }
  }

  private static Map<String, Double> metrics(Chromium page) throws Exception {
    Map<String, Double> m = new java.util.HashMap<>();
    page.command("Performance.getMetrics", Map.of()).get("metrics")
        .forEach(e -> m.put(e.get("name").asText(), e.get("value").asDouble()));
    return m;
  }

  private static double delta(Map<String, Double> a, Map<String, Double> b, String name) {
    return b.getOrDefault(name, 0.0) - a.getOrDefault(name, 0.0);
  }

  private static double at(JsonNode sorted, double q) {
    if (sorted.isEmpty()) {
      return 0;
    }
    return sorted.get((int) Math.min(sorted.size() - 1, Math.floor(q * sorted.size()))).asDouble();
  }

  /** Sets the budget, fetches and draws; returns the page's stats once drawn. */
  private static JsonNode render(Chromium page, int budget) throws Exception {
    long before = page.eval("cacheView.stats.renders").asLong();
    page.eval("cacheView.budget = " + budget + "; cacheView.expand.clear();"
        + " cacheView.refetch()");
    page.waitFor("cacheView.stats.renders > " + before + " && !cacheView.fetching",
        Duration.ofSeconds(60), () -> "no render at budget " + budget);
    Thread.sleep(300); // lets lastFrameMs land
    return page.eval("({...cacheView.stats})");
  }

  private static void send(HttpClient client, String base, List<String> prompts, int concurrency)
      throws Exception {
    Semaphore slots = new Semaphore(concurrency);
    List<CompletableFuture<?>> all = new ArrayList<>();
    for (String p : prompts) {
      slots.acquire();
      String body = "{\"model\":\"" + ServerConfig.EMBEDDED_MODEL_NAME + "\",\"prompt\":"
          + JSON.writeValueAsString(p)
          + ",\"max_tokens\":1,\"temperature\":0}";
      all.add(client.sendAsync(HttpRequest.newBuilder(URI.create(base + "/v1/completions"))
              .header("Content-Type", "application/json")
              .POST(HttpRequest.BodyPublishers.ofString(body)).build(),
              HttpResponse.BodyHandlers.ofString())
          .whenComplete((r, e) -> {
            slots.release();
            if (e != null || r.statusCode() != 200) {
              throw new IllegalStateException(e != null ? e.toString() : r.body());
            }
          }));
    }
    CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).join();
  }
}
