package dev.radixserve.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;
import org.junit.jupiter.api.Test;

class RunSummaryTest {

  private static RequestRecord ok(int index, int prompt, double ttft, List<Double> itl, double e2e,
      int output, int cached) {
    return new RequestRecord(index, index, 0, index, prompt, true, null, 0, ttft, itl, e2e, output,
        output, prompt, cached, true);
  }

  @Test
  void aggregatesSuccessfulRequestsOnly() {
    List<RequestRecord> records = List.of(
        ok(0, 100, 10, List.of(1.0, 3.0), 20, 3, 0),
        ok(1, 100, 30, List.of(2.0), 40, 2, 64),
        RequestRecord.failed(new BenchRequest(2, 2, 0, new int[50]), 2, "HTTP 500: boom", 0, 5));
    RunSummary s = RunSummary.of("w", "http://x", "m", records, 2.0, new int[] {0, 96, 32},
        new int[] {0, 99, 40}, 16);
    assertEquals(3, s.requests());
    assertEquals(2, s.completed());
    assertEquals(1, s.failed());
    assertEquals(1.0, s.requestThroughput(), 1e-12);
    assertEquals(2.5, s.outputThroughput(), 1e-12);
    assertEquals(102.5, s.totalTokenThroughput(), 1e-12);
    assertEquals(20.0, s.ttftMs().mean(), 1e-12);
    assertEquals(2.0, s.itlMs().p50(), 1e-12);
    assertEquals(30.0, s.e2eMs().p50(), 1e-12);
    assertEquals(200, s.promptTokens());
    assertEquals(64, s.cachedTokens());
    assertEquals(0.32, s.hitRate(), 1e-12);
    assertEquals(1, s.requestsWithCacheHit());
    assertEquals(128, s.theoreticalMaxCachedTokens());
    assertEquals(128.0 / 250, s.theoreticalMaxHitRate(), 1e-12);
    assertEquals(2, s.theoreticalRequestsWithHit());
    assertEquals(139, s.tokenGranularMaxCachedTokens());
    assertEquals(139.0 / 250, s.tokenGranularMaxHitRate(), 1e-12);
    assertEquals(64.0 / 139, s.cachedOfTokenGranularMax(), 1e-12);
  }

  @Test
  void comparisonRatiosAndZeroDenominators() {
    RunSummary on = RunSummary.of("w", "a", "m", List.of(ok(0, 100, 10, List.of(), 20, 4, 50)),
        1.0, new int[] {0}, new int[] {0}, 16);
    RunSummary off = RunSummary.of("w", "b", "m", List.of(ok(0, 100, 40, List.of(), 40, 4, 0)),
        2.0, new int[] {0}, new int[] {0}, 16);
    Comparison c = Comparison.of(on, off);
    assertEquals(2.0, c.outputThroughputRatio(), 1e-12);
    assertEquals(0.25, c.ttftP50Ratio(), 1e-12);
    assertEquals(0.5, c.primaryHitRate(), 1e-12);
    assertNull(c.hitRateRatio());
  }
}
