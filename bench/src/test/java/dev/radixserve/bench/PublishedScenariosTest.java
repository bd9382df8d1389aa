package dev.radixserve.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Counts and theoretical maxima of the six published scenarios at their block size, 4. The
 * published radix hit rates were 87.5 / 95.8 / 87.5 / 83.3 / 0 / 79.2 %; these structures give
 * exactly those as the share of requests with a hit, except group-eviction (75.0 %: 6 groups
 * can hit at most 18 of 24 even with an unlimited cache). As token hit rates (cached / prompt)
 * they give 58.3 / 82.1 / 65.6 / 55.6 / 0 / 50.0 %.
 */
class PublishedScenariosTest {

  private static final WorkloadParams PARAMS = new WorkloadParams(7, null, 8, 1024);

  private static void check(String name, int requests, int promptTokens, int cachedAtBlock4,
      int requestsWithHit) {
    Workload w = Workloads.create(name, PARAMS);
    assertEquals(requests, w.size(), name + " requests");
    assertEquals(promptTokens, w.totalPromptTokens(), name + " prompt tokens");
    int[] max = TheoreticalMaximum.perRequest(w, 4);
    int cached = 0;
    int hits = 0;
    for (int m : max) {
      cached += m;
      hits += m > 0 ? 1 : 0;
    }
    assertEquals(cachedAtBlock4, cached, name + " theoretical cached tokens");
    assertEquals(requestsWithHit, hits, name + " requests with a hit");
  }

  @Test
  void sharedPrefixBasic() {
    check("shared-prefix-basic", 8, 192, 7 * 16, 7); // 58.3 % of tokens, 7/8 = 87.5 % of requests
  }

  @Test
  void highReuseManyRequests() {
    check("high-reuse-many-requests", 24, 672, 23 * 24, 23); // 82.1 %, 23/24 = 95.8 %
  }

  @Test
  void branchingConversation() {
    check("branching-conversation", 8, 256, 7 * 24, 7); // 65.6 %, 7/8 = 87.5 %
  }

  @Test
  void multiPrefixGroups() {
    check("multi-prefix-groups", 24, 576, 20 * 16, 20); // 55.6 %, 20/24 = 83.3 %
  }

  @Test
  void lowReuseControl() {
    check("low-reuse-control", 8, 192, 0, 0);
  }

  @Test
  void evictionPressure() {
    check("group-eviction", 24, 576, 18 * 16, 18); // 50.0 %, 18/24 = 75.0 % (published 79.2)
  }

  @Test
  void theoreticalHitRatesAsSummarized() {
    Workload w = Workloads.create("high-reuse-many-requests", PARAMS);
    int[] max = TheoreticalMaximum.perRequest(w, 4);
    List<RequestRecord> notSent = w.requests().stream()
        .map(r -> RequestRecord.failed(r, r.index(), "not sent", 0, 0)).toList();
    RunSummary s = RunSummary.of(w.name(), "u", "m", notSent, 1, max,
        TheoreticalMaximum.perRequestTokens(w), 4);
    assertEquals(552.0 / 672, s.theoreticalMaxHitRate(), 1e-12);
    assertEquals(23, s.theoreticalRequestsWithHit());
    assertEquals(552, s.tokenGranularMaxCachedTokens()); // 24 shared tokens: whole blocks of 4
    // at block 16 whole blocks cover only 16 of the 24 shared tokens; to the token, all 24
    RunSummary at16 = RunSummary.of(w.name(), "u", "m", notSent, 1,
        TheoreticalMaximum.perRequest(w, 16), TheoreticalMaximum.perRequestTokens(w), 16);
    assertEquals(23 * 16, at16.theoreticalMaxCachedTokens());
    assertEquals(23 * 24, at16.tokenGranularMaxCachedTokens());
  }
}
