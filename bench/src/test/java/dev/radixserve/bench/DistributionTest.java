package dev.radixserve.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;
import org.junit.jupiter.api.Test;

class DistributionTest {

  @Test
  void interpolatesBetweenClosestRanks() {
    Distribution d = Distribution.of(List.of(4.0, 1.0, 3.0, 2.0));
    assertEquals(4, d.count());
    assertEquals(2.5, d.mean(), 1e-12);
    assertEquals(2.5, d.p50(), 1e-12);
    assertEquals(3.7, d.p90(), 1e-12); // rank 2.7
    assertEquals(3.97, d.p99(), 1e-12); // rank 2.97
    assertEquals(1.0, d.min());
    assertEquals(4.0, d.max());
  }

  @Test
  void singleValueAndEmpty() {
    Distribution d = Distribution.of(List.of(7.0));
    assertEquals(7.0, d.p50());
    assertEquals(7.0, d.p99());
    assertNull(Distribution.of(List.of()));
  }

  @Test
  void percentileOfHundredValues() {
    double[] v = new double[100];
    for (int i = 0; i < 100; i++) {
      v[i] = i + 1;
    }
    assertEquals(50.5, Distribution.percentile(v, 50), 1e-12);
    assertEquals(99.01, Distribution.percentile(v, 99), 1e-12);
    assertEquals(100, Distribution.percentile(v, 100), 1e-12);
  }
}
