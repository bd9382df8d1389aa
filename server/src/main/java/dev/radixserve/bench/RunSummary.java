package dev.radixserve.bench;

import java.util.ArrayList;
import java.util.List;

/**
 * Every aggregate figure of one workload run against one server. Latencies are over successful
 * requests; throughputs divide successful requests and their tokens by the wall-clock duration.
 * The hit rate is cached / prompt tokens over successful requests; the theoretical maximum is
 * over every planned request, in planned order, at {@code blockSize} (see
 * {@link TheoreticalMaximum}).
 */
public record RunSummary(
    String workload,
    String url,
    String model,
    int requests,
    int completed,
    int failed,
    double durationS,
    double requestThroughput,
    double outputThroughput,
    double totalTokenThroughput,
    Distribution ttftMs,
    Distribution itlMs,
    Distribution e2eMs,
    long promptTokens,
    long outputTokens,
    long cachedTokens,
    double hitRate,
    int requestsWithCacheHit,
    boolean cachedTokensReported,
    int blockSize,
    long theoreticalMaxCachedTokens,
    double theoreticalMaxHitRate,
    int theoreticalRequestsWithHit) {

  static RunSummary of(String workload, String url, String model, List<RequestRecord> records,
      double durationS, int[] theoreticalMax, int blockSize) {
    if (theoreticalMax.length != records.size()) {
      throw new IllegalStateException(
          records.size() + " records but " + theoreticalMax.length + " theoretical maxima");
    }
    List<Double> ttft = new ArrayList<>();
    List<Double> itl = new ArrayList<>();
    List<Double> e2e = new ArrayList<>();
    long prompt = 0;
    long output = 0;
    long cached = 0;
    int completed = 0;
    int withHit = 0;
    boolean reported = false;
    for (RequestRecord r : records) {
      if (!r.success()) {
        continue;
      }
      completed++;
      ttft.add(r.ttftMs());
      itl.addAll(r.itlMs());
      e2e.add(r.e2eMs());
      prompt += r.promptTokens();
      output += r.outputTokens();
      cached += r.cachedTokens();
      withHit += r.cachedTokens() > 0 ? 1 : 0;
      reported |= r.cachedTokensReported();
    }
    long plannedPrompt = records.stream().mapToLong(RequestRecord::promptTokens).sum();
    long theoretical = 0;
    int theoreticalHits = 0;
    for (int t : theoreticalMax) {
      theoretical += t;
      theoreticalHits += t > 0 ? 1 : 0;
    }
    double perSecond = durationS > 0 ? 1 / durationS : 0;
    return new RunSummary(workload, url, model, records.size(), completed,
        records.size() - completed, durationS, completed * perSecond, output * perSecond,
        (prompt + output) * perSecond, Distribution.of(ttft), Distribution.of(itl),
        Distribution.of(e2e), prompt, output, cached, ratio(cached, prompt), withHit, reported,
        blockSize, theoretical, ratio(theoretical, plannedPrompt), theoreticalHits);
  }

  private static double ratio(long part, long whole) {
    return whole == 0 ? 0 : (double) part / whole;
  }
}
