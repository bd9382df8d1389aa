package dev.radixserve.bench;

import java.io.PrintStream;
import java.util.Locale;

/** Prints results as aligned text tables, in the layout of {@code vllm bench serve}. */
final class SummaryTable {

  private static final int WIDTH = 64;

  private SummaryTable() {}

  /** @param cacheAtStart what the server's cache held when the run began */
  static void print(PrintStream out, RunSummary s, String description, String cacheAtStart) {
    out.println(title(" bench: " + s.workload() + " "));
    out.println(description);
    out.println("server: " + s.url() + "   model: " + s.model());
    row(out, "Successful requests", Integer.toString(s.completed()));
    row(out, "Failed requests", Integer.toString(s.failed()));
    row(out, "Benchmark duration (s)", f(s.durationS()));
    row(out, "Request throughput (req/s)", f(s.requestThroughput()));
    row(out, "Output token throughput (tok/s)", f(s.outputThroughput()));
    row(out, "Total token throughput (tok/s)", f(s.totalTokenThroughput()));
    row(out, "Total prompt tokens", Long.toString(s.promptTokens()));
    row(out, "Total output tokens", Long.toString(s.outputTokens()));
    latency(out, "Time to First Token", "TTFT", s.ttftMs());
    latency(out, "Inter-token Latency", "ITL", s.itlMs());
    latency(out, "End-to-end Latency", "E2E", s.e2eMs());
    out.println(title(" Prefix cache (block size " + s.blockSize() + ") "));
    out.println("Cache at start: " + cacheAtStart);
    row(out, "Cached prompt tokens", Long.toString(s.cachedTokens())
        + (s.cachedTokensReported() ? "" : " (server reported none)"));
    row(out, "Hit rate (cached / prompt)", pct(s.hitRate()));
    row(out, "Requests with a cache hit", s.requestsWithCacheHit() + "/" + s.completed());
    row(out, "Theoretical max cached tokens", Long.toString(s.theoreticalMaxCachedTokens()));
    row(out, "Theoretical max hit rate", pct(s.theoreticalMaxHitRate()));
    row(out, "Theoretical requests with a hit",
        s.theoreticalRequestsWithHit() + "/" + s.requests());
    row(out, "Token-granular max cached tokens", Long.toString(s.tokenGranularMaxCachedTokens()));
    row(out, "Token-granular max hit rate", pct(s.tokenGranularMaxHitRate()));
    row(out, "Cached / token-granular max", pct(s.cachedOfTokenGranularMax()));
    out.println("(theoretical: from an empty cache, prompts only, planned order, never the last"
        + " token; in whole blocks, or to the token)");
    out.println("=".repeat(WIDTH));
  }

  static void print(PrintStream out, Comparison c) {
    out.println(title(" compare: " + c.workload() + " "));
    out.println("ratio = " + c.primaryUrl() + " / " + c.compareUrl());
    row(out, "Output throughput ratio", x(c.outputThroughputRatio()));
    row(out, "Request throughput ratio", x(c.requestThroughputRatio()));
    row(out, "TTFT p50 ratio", x(c.ttftP50Ratio()));
    row(out, "TTFT p99 ratio", x(c.ttftP99Ratio()));
    row(out, "Hit rate primary / compare",
        pct(c.primaryHitRate()) + " / " + pct(c.compareHitRate()));
    row(out, "Hit rate ratio", x(c.hitRateRatio()));
    out.println("=".repeat(WIDTH));
  }

  private static void latency(PrintStream out, String heading, String name, Distribution d) {
    out.println(title(" " + heading + " "));
    if (d == null) {
      row(out, name + " (ms)", "no samples");
      return;
    }
    row(out, "Mean " + name + " (ms)", f(d.mean()));
    row(out, "P50 " + name + " (ms)", f(d.p50()));
    row(out, "P90 " + name + " (ms)", f(d.p90()));
    row(out, "P99 " + name + " (ms)", f(d.p99()));
  }

  static String title(String text) {
    int pad = Math.max(0, WIDTH - text.length());
    return "=".repeat(pad / 2) + text + "=".repeat(pad - pad / 2);
  }

  private static void row(PrintStream out, String label, String value) {
    out.printf(Locale.ROOT, "%-42s %21s%n", label + ":", value);
  }

  private static String f(double v) {
    return String.format(Locale.ROOT, "%.2f", v);
  }

  private static String pct(double v) {
    return String.format(Locale.ROOT, "%.1f%%", v * 100);
  }

  private static String x(Double v) {
    return v == null ? "n/a" : String.format(Locale.ROOT, "%.2fx", v);
  }
}
