package dev.radixserve.bench;

/**
 * One workload run against two servers: each ratio is primary / compare (so with the primary
 * caching and the compare not, throughput above 1 and TTFT below 1 mean the cache pays). A ratio
 * whose denominator is zero (or missing, e.g. no successful request) is null.
 */
public record Comparison(
    String workload,
    String primaryUrl,
    String compareUrl,
    Double outputThroughputRatio,
    Double requestThroughputRatio,
    Double ttftP50Ratio,
    Double ttftP99Ratio,
    double primaryHitRate,
    double compareHitRate,
    Double hitRateRatio) {

  static Comparison of(RunSummary primary, RunSummary compare) {
    return new Comparison(primary.workload(), primary.url(), compare.url(),
        ratio(primary.outputThroughput(), compare.outputThroughput()),
        ratio(primary.requestThroughput(), compare.requestThroughput()),
        primary.ttftMs() == null || compare.ttftMs() == null ? null
            : ratio(primary.ttftMs().p50(), compare.ttftMs().p50()),
        primary.ttftMs() == null || compare.ttftMs() == null ? null
            : ratio(primary.ttftMs().p99(), compare.ttftMs().p99()),
        primary.hitRate(), compare.hitRate(), ratio(primary.hitRate(), compare.hitRate()));
  }

  private static Double ratio(double a, double b) {
    return b == 0 ? null : a / b;
  }
}
