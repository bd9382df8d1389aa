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

  BenchReport.Run run(Workload workload, URI url, String model, String role)
      throws InterruptedException {
    long start = System.nanoTime();
    CompletionClient client =
        new CompletionClient(http, url, apiKey, model, maxTokens, timeout, start);
    IntConsumer onDone = progress == null ? done -> {}
        : new ProgressBar(progress, workload.name() + " @ " + url, workload.size());
    List<RequestRecord> records =
        new LoadDriver(client, maxConcurrency, requestRate, seed).run(workload, onDone);
    double durationS = (System.nanoTime() - start) / 1e9;
    RunSummary summary = RunSummary.of(workload.name(), url.toString(), model, records, durationS,
        TheoreticalMaximum.perRequest(workload, blockSize),
        TheoreticalMaximum.perRequestTokens(workload), blockSize);
    return new BenchReport.Run(workload.name(), workload.description(), role, summary, records);
  }
}
