package dev.radixserve.bench;

import dev.radixserve.cache.BlockHasher;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * {@code bench --route-url ... --route-events ...}: the same workload sent to 2–4 replicas, once
 * in turn (round-robin) and once by the longest prefix their KV events say they hold, each from
 * cold caches; reports the cached-token ratio of both. Shows what a cache-aware router gains.
 */
final class RoutingBench {

  /** Both policies start from emptied caches. */
  private static final String RESET = "emptied (POST /reset_prefix_cache)";

  /** One policy's run of one workload. */
  record Result(String workload, String policy, RunSummary summary, int[] requestsPerReplica,
      List<String> eventAnomalies) {}

  private final BenchRunner runner;
  private final HttpClient http;
  private final List<URI> urls;
  private final List<String> events;
  private final List<String> replays;
  private final String apiKey;
  private final int blockSize;
  private final PrintStream out;

  /**
   * @param runner runs each workload (concurrency, rate, seed, output tokens)
   * @param http the client that resets the replicas' caches
   * @param blockSize the replicas' block size, to hash prompts as they do
   */
  RoutingBench(BenchRunner runner, HttpClient http, List<URI> urls, List<String> events,
      List<String> replays, String apiKey, int blockSize, PrintStream out) {
    if (urls.size() < 2 || urls.size() > 4) {
      throw new IllegalArgumentException("--route-url: give 2 to 4 replicas, got " + urls.size());
    }
    if (events.size() != urls.size()) {
      throw new IllegalArgumentException("--route-events: one per --route-url (" + urls.size()
          + "), got " + events.size());
    }
    if (!replays.isEmpty() && replays.size() != urls.size()) {
      throw new IllegalArgumentException("--route-replay: none or one per --route-url ("
          + urls.size() + "), got " + replays.size());
    }
    this.runner = runner;
    this.http = http;
    this.urls = urls;
    this.events = events;
    this.replays = replays;
    this.apiKey = apiKey;
    this.blockSize = blockSize;
    this.out = out;
  }

  List<Result> run(List<Workload> workloads, String model) throws Exception {
    List<KvEventFollower> followers = new ArrayList<>();
    List<Result> results = new ArrayList<>();
    try {
      for (int i = 0; i < urls.size(); i++) {
        followers.add(new KvEventFollower(events.get(i),
            replays.isEmpty() ? null : replays.get(i), "", e -> {}));
      }
      BlockHasher hasher = new BlockHasher(model, blockSize);
      for (Workload w : workloads) {
        List<Result> pair = new ArrayList<>();
        for (RoutedSender.Policy policy : RoutedSender.Policy.values()) {
          resetCaches(followers);
          long start = System.nanoTime();
          List<CompletionClient> clients =
              urls.stream().map(u -> runner.client(u, model, start)).toList();
          RoutedSender sender = new RoutedSender(clients, followers, hasher, policy);
          RunSummary summary = runner.run(w, sender, policy.label + " over " + urls, model,
              policy.label, RESET, start).summary();
          List<String> anomalies = followers.stream()
              .flatMap(f -> f.anomalies().stream()).toList();
          pair.add(new Result(w.name(), policy.label, summary, sender.sentPerReplica(),
              anomalies));
          SummaryTable.print(out, summary, w.description(), RESET);
        }
        print(pair);
        results.addAll(pair);
      }
    } finally {
      followers.forEach(KvEventFollower::close);
    }
    return results;
  }

  /** Empties every replica's cache and waits until its events say so (both policies start cold). */
  private void resetCaches(List<KvEventFollower> followers)
      throws IOException, InterruptedException {
    for (URI u : urls) {
      int status = CompletionClient.resetPrefixCache(http, u, apiKey);
      if (status != 200) {
        throw new IOException("POST " + u.resolve("/reset_prefix_cache") + " answered " + status);
      }
    }
    for (int i = 0; i < 500 && followers.stream().anyMatch(f -> !f.blocks().isEmpty()); i++) {
      Thread.sleep(10);
    }
  }

  private void print(List<Result> pair) {
    out.println(SummaryTable.title(" routing: " + pair.getFirst().workload() + " "));
    for (Result r : pair) {
      out.printf(Locale.ROOT, "%-12s cached %6d / %6d prompt tokens = %5.1f%%  requests per"
              + " replica %s%n", r.policy(), r.summary().cachedTokens(),
          r.summary().promptTokens(), 100 * r.summary().hitRate(),
          Arrays.toString(r.requestsPerReplica()));
    }
    double rr = pair.get(0).summary().hitRate();
    double px = pair.get(1).summary().hitRate();
    out.printf(Locale.ROOT, "cached-token ratio prefix / round-robin: %s%n",
        rr == 0 ? "n/a (round-robin cached nothing)" : String.format(Locale.ROOT, "%.2fx", px / rr));
    pair.stream().filter(r -> !r.eventAnomalies().isEmpty()).forEach(r -> out.println(
        "event anomalies after " + r.policy() + ": " + r.eventAnomalies()));
    out.println("=".repeat(64));
  }

  static void write(Path file, List<Result> results) throws IOException {
    BenchReport.mapper().writeValue(file.toFile(), results);
  }
}
