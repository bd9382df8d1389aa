package dev.radixserve.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.List;
import java.util.function.IntConsumer;

/** Runs one workload against one server and summarizes it. */
final class BenchRunner {

  private final HttpClient http;
  private final String apiKey;
  private final String modelOverride;
  private final int maxTokens;
  private final int maxConcurrency;
  private final Double requestRate;
  private final long seed;
  private final int blockSize;
  private final Duration timeout;
  private final PrintStream progress;

  /**
   * @param modelOverride the model id to send, or null to ask each server's {@code /v1/models}
   * @param progress where the progress bar is drawn, or null for none
   */
  BenchRunner(HttpClient http, String apiKey, String modelOverride, int maxTokens,
      int maxConcurrency, Double requestRate, long seed, int blockSize, Duration timeout,
      PrintStream progress) {
    this.http = http;
    this.apiKey = apiKey;
    this.modelOverride = modelOverride;
    this.maxTokens = maxTokens;
    this.maxConcurrency = maxConcurrency;
    this.requestRate = requestRate;
    this.seed = seed;
    this.blockSize = blockSize;
    this.timeout = timeout;
    this.progress = progress;
  }

  String modelFor(URI url) throws IOException, InterruptedException {
    return modelOverride != null ? modelOverride : CompletionClient.firstModelId(http, url, apiKey);
  }

  /** @param cacheAtStart what the server's cache held when the run began, for the report */
  BenchReport.Run run(Workload workload, URI url, String model, String role, String cacheAtStart)
      throws InterruptedException {
    long start = System.nanoTime();
    return run(workload, client(url, model, start), url.toString(), model, role, cacheAtStart,
        start);
  }

  /** A client of one server for a run that started at {@code runStartNanos}. */
  CompletionClient client(URI url, String model, long runStartNanos) {
    return new CompletionClient(http, url, apiKey, model, maxTokens, timeout, runStartNanos);
  }

  /**
   * Runs {@code workload} through {@code sender} (one server, or a router over several).
   *
   * @param target what the summary names as the server
   */
  BenchReport.Run run(Workload workload, RequestSender sender, String target, String model,
      String role, String cacheAtStart, long start) throws InterruptedException {
    IntConsumer onDone = progress == null ? done -> {}
        : new ProgressBar(progress, workload.name() + " @ " + target, workload.size());
    List<RequestRecord> records =
        new LoadDriver(sender, maxConcurrency, requestRate, seed).run(workload, onDone);
    double durationS = (System.nanoTime() - start) / 1e9;
    RunSummary summary = RunSummary.of(workload.name(), target, model, records, durationS,
        TheoreticalMaximum.perRequest(workload, blockSize),
        TheoreticalMaximum.perRequestTokens(workload), blockSize);
    return new BenchReport.Run(workload.name(), workload.description(), role, cacheAtStart,
        summary, records);
  }
}
