package dev.radixserve.bench;

import java.util.ArrayList;
import java.util.List;

/**
 * Every aggregate figure of one workload run against one server. Latencies are over successful
 * requests; throughputs divide successful requests and their tokens by the wall-clock duration.
 * The hit rate is cached / prompt tokens over successful requests; the theoretical maxima are
 * over every planned request, in planned order (see {@link TheoreticalMaximum}): in whole blocks
 * of {@code blockSize}, and to the token (what a token-granular cache such as radixserve's can
 * reach: every shared token but a prompt's last).
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
    int theoreticalRequestsWithHit,
    long tokenGranularMaxCachedTokens,
    double tokenGranularMaxHitRate) {

  /**
   * @param theoreticalMax per request, in whole blocks of {@code blockSize}
   * @param tokenGranularMax per request, to the token
   */
  static RunSummary of(String workload, String url, String model, List<RequestRecord> records,
      double durationS, int[] theoreticalMax, int[] tokenGranularMax, int blockSize) {
    if (theoreticalMax.length != records.size() || tokenGranularMax.length != records.size()) {
      throw new IllegalStateException(records.size() + " records but " + theoreticalMax.length
          + " theoretical maxima and " + tokenGranularMax.length + " token-granular ones");
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
    long tokenGranular = 0;
    for (int t : tokenGranularMax) {
      tokenGranular += t;
    }
    double perSecond = durationS > 0 ? 1 / durationS : 0;
    return new RunSummary(workload, url, model, records.size(), completed,
        records.size() - completed, durationS, completed * perSecond, output * perSecond,
        (prompt + output) * perSecond, Distribution.of(ttft), Distribution.of(itl),
        Distribution.of(e2e), prompt, output, cached, ratio(cached, prompt), withHit, reported,
        blockSize, theoretical, ratio(theoretical, plannedPrompt), theoreticalHits, tokenGranular,
        ratio(tokenGranular, plannedPrompt));
  }

  /** Cached tokens over the token-granular maximum (1.0: every shared token was reused). */
  public double cachedOfTokenGranularMax() {
    return ratio(cachedTokens, tokenGranularMaxCachedTokens);
  }

  private static double ratio(long part, long whole) {
    return whole == 0 ? 0 : (double) part / whole;
  }
}
