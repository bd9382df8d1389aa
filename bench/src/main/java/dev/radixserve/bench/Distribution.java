package dev.radixserve.bench;

import java.util.Arrays;
import java.util.Collection;

/**
 * Mean and percentiles of a sample. Percentiles interpolate linearly between the two closest
 * ranks (rank = p/100 × (n − 1)), as numpy's default does, so p50 of {1, 2, 3, 4} is 2.5.
 *
 * @param count sample size (at least 1)
 */
public record Distribution(int count, double mean, double p50, double p90, double p99,
    double min, double max) {

  /** The distribution of these values, or null when there are none. */
  static Distribution of(Collection<Double> values) {
    if (values.isEmpty()) {
      return null;
    }
    double[] sorted = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    return new Distribution(sorted.length, Arrays.stream(sorted).average().orElseThrow(),
        percentile(sorted, 50), percentile(sorted, 90), percentile(sorted, 99),
        sorted[0], sorted[sorted.length - 1]);
  }

  /** Percentile p (0–100) of ascending values. */
  static double percentile(double[] sorted, double p) {
    if (sorted.length == 0) {
      throw new IllegalArgumentException("percentile of an empty sample");
    }
    if (p < 0 || p > 100) {
      throw new IllegalArgumentException("percentile must be in [0, 100], got " + p);
    }
    double rank = p / 100 * (sorted.length - 1);
    int lo = (int) Math.floor(rank);
    int hi = (int) Math.ceil(rank);
    return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo);
  }
}
