package dev.radixserve.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code bench}: drives an OpenAI-compatible server with the prefix-cache workloads and reports
 * latency, throughput and cached tokens against the theoretical maximum. Exit code 0 when every
 * request succeeded, 1 when some failed, 2 on bad usage.
 */
@Command(name = "bench", mixinStandardHelpOptions = true, sortOptions = false,
    description = {
        "Benchmark prefix caching: seeded token-id workloads streamed to /v1/completions.",
        "Workloads: shared-system-prompt, multi-turn, few-shot, agent-loop, unique,"
            + " eviction-pressure, tiered-system-prompts, shared-prefix-basic,"
            + " high-reuse-many-requests, branching-conversation, multi-prefix-groups,"
            + " low-reuse-control,"
            + " group-eviction (the published scenario eviction_pressure)."})
public final class BenchCommand implements Callable<Integer> {

  private static final int DEFAULT_CONCURRENCY = 8;

  @Option(names = "--url", defaultValue = "http://127.0.0.1:8000",
      description = "Server base URL (default: ${DEFAULT-VALUE}).")
  URI url;

  @Option(names = "--compare-url",
      description = "Second server to run the same workloads against (e.g. --prefix-caching=false);"
          + " prints ratios url / compare-url.")
  URI compareUrl;

  @Option(names = "--model", description = "Model id (default: the first of GET /v1/models).")
  String model;

  @Option(names = "--workload", defaultValue = "all",
      description = "A workload name (see above) or 'all' (default: ${DEFAULT-VALUE}).")
  String workload;

  @Option(names = "--seed", defaultValue = "0", description = "Seeds prompts and arrivals.")
  long seed;

  @Option(names = "--num-requests",
      description = "Requests per workload (default: each workload's own; the published"
          + " scenarios have fixed counts).")
  Integer numRequests;

  @Option(names = "--max-tokens", defaultValue = "32",
      description = "Output tokens per request (ignore_eos), default ${DEFAULT-VALUE}.")
  int maxTokens;

  @Option(names = "--max-model-len", defaultValue = "1024",
      description = "Server context (prompt + output); prompts are sized to fit."
          + " Default ${DEFAULT-VALUE} (GPT-2).")
  int maxModelLen;

  @Option(names = "--concurrency",
      description = "Most requests in flight (default: " + DEFAULT_CONCURRENCY
          + "; with --request-rate: no limit).")
  Integer concurrency;

  @Option(names = "--request-rate",
      description = "Requests per second with Poisson arrivals (seeded); default: as fast as"
          + " --concurrency allows.")
  Double requestRate;

  @Option(names = "--api-key", description = "Bearer token.")
  String apiKey;

  @Option(names = "--block-size", defaultValue = "16",
      description = "Block size for the theoretical maximum (default ${DEFAULT-VALUE}).")
  int blockSize;

  @Option(names = "--timeout", defaultValue = "600",
      description = "Seconds one request may take (default ${DEFAULT-VALUE}).")
  int timeoutSeconds;

  @Option(names = "--output", description = "Write every figure and request record as JSON.")
  Path output;

  @Option(names = "--chart", description = "Write a PNG chart (hit rates, throughput ratios).")
  Path chart;

  @Option(names = "--warmup", defaultValue = "16",
      description = "Unmeasured requests (distinct prompts, no shared prefixes) sent to each"
          + " server first, so a cold JIT does not bias whichever server runs first"
          + " (default ${DEFAULT-VALUE}; 0 disables).")
  int warmup;

  @Option(names = "--reset-cache", negatable = true, defaultValue = "true",
      fallbackValue = "true",
      description = "POST /reset_prefix_cache to each server before each workload, so that the"
          + " cache starts empty as the theoretical maximum assumes (default on). A server"
          + " that refuses is measured as it is, with a warning. --no-reset-cache keeps a warm"
          + " cache: cached tokens may then exceed the maximum.")
  boolean resetCache;

  @Option(names = "--quiet", description = "No progress bar.")
  boolean quiet;

  @Option(names = "--route-url", paramLabel = "URL",
      description = "Routing mode: a replica (give 2 to 4). Each workload runs twice from cold"
          + " caches, round-robin and by the longest prefix the replicas' KV events report;"
          + " --url and --compare-url are not used.")
  List<URI> routeUrls = new ArrayList<>();

  @Option(names = "--route-events", paramLabel = "ADDR",
      description = "Routing mode: each replica's KV event PUB address (e.g. tcp://127.0.0.1:5557),"
          + " in --route-url order.")
  List<String> routeEvents = new ArrayList<>();

  @Option(names = "--route-replay", paramLabel = "ADDR",
      description = "Routing mode: each replica's KV event replay address, in --route-url order"
          + " (optional; fills gaps in the stream).")
  List<String> routeReplays = new ArrayList<>();

  private final PrintStream out;
  private final PrintStream err;

  public BenchCommand() {
    this(System.out, System.err);
  }

  BenchCommand(PrintStream out, PrintStream err) {
    this.out = out;
    this.err = err;
  }

  public static void main(String[] args) {
    System.exit(commandLine(new BenchCommand()).execute(args));
  }

  static CommandLine commandLine(BenchCommand command) {
    return new CommandLine(command);
  }

  private int routing(HttpClient http, BenchRunner runner, List<Workload> workloads)
      throws Exception {
    RoutingBench bench;
    String routedModel;
    try {
      bench = new RoutingBench(runner, http, routeUrls, routeEvents, routeReplays, apiKey,
          blockSize, out);
    } catch (IllegalArgumentException e) {
      err.println("bench: " + e.getMessage());
      return 2;
    }
    try {
      routedModel = runner.modelFor(routeUrls.getFirst());
    } catch (IOException e) {
      err.println("bench: cannot list models at " + routeUrls.getFirst() + ": " + e.getMessage());
      return 1;
    }
    List<RoutingBench.Result> results = bench.run(workloads, routedModel);
    if (output != null) {
      RoutingBench.write(output, results);
      out.println("wrote " + output);
    }
    int failed = results.stream().mapToInt(r -> r.summary().failed()).sum();
    if (failed > 0) {
      err.println("bench: " + failed + " request(s) failed");
      return 1;
    }
    return 0;
  }

  /**
   * Empties the server's cache when {@code --reset-cache} asks for it (the theoretical maximum
   * assumes an empty cache) and says what the run starts from, as the report records it.
   */
  private String cacheAtStart(HttpClient http, URI server) throws InterruptedException {
    if (!resetCache) {
      return "as found (--no-reset-cache)";
    }
    String why;
    try {
      int status = CompletionClient.resetPrefixCache(http, server, apiKey);
      if (status == 200) {
        return "emptied (POST /reset_prefix_cache)";
      }
      why = "answered " + status;
    } catch (IOException e) {
      why = "failed: " + e.getMessage();
    }
    err.println("bench: POST " + server.resolve("/reset_prefix_cache") + " " + why + "; measuring"
        + " the cache as found: cached tokens may exceed the theoretical maximum, which assumes"
        + " an empty cache");
    return "as found (POST /reset_prefix_cache " + why + ")";
  }

  @Override
  public Integer call() throws Exception {
    List<Workload> workloads;
    int maxConcurrency;
    try {
      if (blockSize < 1) {
        throw new IllegalArgumentException("--block-size must be >= 1, got " + blockSize);
      }
      workloads = Workloads.select(workload,
          new WorkloadParams(seed, numRequests, maxTokens, maxModelLen));
      maxConcurrency = concurrency != null ? concurrency
          : requestRate != null ? Integer.MAX_VALUE : DEFAULT_CONCURRENCY;
      if (maxConcurrency < 1) {
        throw new IllegalArgumentException("--concurrency must be >= 1, got " + maxConcurrency);
      }
      if (warmup < 0) {
        throw new IllegalArgumentException("--warmup must be >= 0, got " + warmup);
      }
    } catch (IllegalArgumentException e) {
      err.println("bench: " + e.getMessage());
      return 2;
    }
    HttpClient http = CompletionClient.newHttpClient();
    BenchRunner runner = new BenchRunner(http, apiKey, model, maxTokens, maxConcurrency,
        requestRate, seed, blockSize, Duration.ofSeconds(timeoutSeconds),
        ProgressBar.wanted(quiet) ? err : null);
    if (!routeUrls.isEmpty()) {
      return routing(http, runner, workloads);
    }
    String primaryModel;
    String compareModel;
    try {
      primaryModel = runner.modelFor(url);
      compareModel = compareUrl == null ? null : runner.modelFor(compareUrl);
    } catch (IOException e) {
      err.println("bench: cannot list models (" + e.getClass().getSimpleName() + "): "
          + e.getMessage() + "; is the server at " + url
          + (compareUrl == null ? "" : " / " + compareUrl) + " up? Or pass --model.");
      return 1;
    }

    if (warmup > 0) {
      // A different seed than the measured workloads: warm-up prompts share nothing with them.
      Workload warm = Workloads.create("unique",
          new WorkloadParams(~seed, warmup, maxTokens, maxModelLen));
      runner.run(warm, url, primaryModel, "warmup", "as found");
      if (compareUrl != null) {
        runner.run(warm, compareUrl, compareModel, "warmup", "as found");
      }
    }

    List<BenchReport.Run> runs = new ArrayList<>();
    List<RunSummary> primary = new ArrayList<>();
    List<RunSummary> compared = new ArrayList<>();
    List<Comparison> comparisons = new ArrayList<>();
    for (Workload w : workloads) {
      BenchReport.Run run = runner.run(w, url, primaryModel, "primary", cacheAtStart(http, url));
      runs.add(run);
      primary.add(run.summary());
      SummaryTable.print(out, run.summary(), w.description(), run.cacheAtStart());
      if (compareUrl != null) {
        BenchReport.Run other = runner.run(w, compareUrl, compareModel, "compare",
            cacheAtStart(http, compareUrl));
        runs.add(other);
        compared.add(other.summary());
        SummaryTable.print(out, other.summary(), w.description(), other.cacheAtStart());
        Comparison c = Comparison.of(run.summary(), other.summary());
        comparisons.add(c);
        SummaryTable.print(out, c);
      }
    }
    BenchReport report = new BenchReport(new BenchReport.Settings(url.toString(),
        compareUrl == null ? null : compareUrl.toString(), primaryModel, seed, numRequests,
        maxTokens, maxModelLen, maxConcurrency == Integer.MAX_VALUE ? null : maxConcurrency,
        requestRate, blockSize, resetCache), runs, comparisons);
    if (output != null) {
      report.write(output);
      out.println("wrote " + output);
    }
    if (chart != null) {
      HitRateChart.write(chart, primary, comparisons, compared);
      out.println("wrote " + chart);
    }
    int failed = runs.stream().mapToInt(r -> r.summary().failed()).sum();
    if (failed > 0) {
      err.println("bench: " + failed + " request(s) failed; see the error field in --output");
      return 1;
    }
    return 0;
  }
}
