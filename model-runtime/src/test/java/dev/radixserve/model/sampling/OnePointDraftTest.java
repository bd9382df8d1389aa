package dev.radixserve.model.sampling;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Arrays;
import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Speculative decoding verifies an n-gram draft token d by sampling the target's distribution p
 * as usual and accepting d when the drawn token is d. That is standard speculative sampling
 * (Leviathan et al. 2023, Chen et al. 2023) with a one-point draft distribution q = δ_d: accept
 * with probability min(1, p(d) / q(d)) = p(d), and on rejection draw from max(0, p − q),
 * normalised, which is p with d removed and renormalised. Here, exactly (no sampling): for fixed
 * logits, temperature and top-p, the distribution the sampler draws from
 * ({@link LogitsSampler#distribution}) gives the paper's acceptance probability for every d,
 * and, conditioned on not drawing d, the paper's residual distribution; the target p is computed
 * here independently (softmax of logits / T, the top-p nucleus, renormalised).
 */
class OnePointDraftTest {

  private static final float[] LOGITS = {2.0f, 1.5f, 1.0f, 0.5f, 0.0f, -1.0f,
      Float.NEGATIVE_INFINITY, 3.0f, -0.25f, 1.25f};
  private static final double EXACT = 1e-6; // float logits / T, as the sampler scales them

  @ParameterizedTest
  @CsvSource({"1.0, 1.0", "0.7, 0.9", "1.3, 0.8", "0.5, 0.5"})
  void acceptanceIsTheTargetsProbabilityAndTheResampleIsTheTargetWithoutTheDraft(
      double temperature, double topP) {
    double[] p = target(temperature, topP);
    LogitsSampler sampler = new LogitsSampler(new SamplingParams(temperature, 0, topP, 0, 1L, 1,
        0, 0, Set.of(), false, 0), LOGITS.length);
    TokenDistribution sampled = sampler.distribution(LOGITS.clone());
    for (int d = 0; d < LOGITS.length; d++) {
      double[] q = new double[LOGITS.length];
      q[d] = 1;
      // the probability that drawing from the sampler's distribution gives d
      assertEquals(acceptance(p, q, d), sampled.probability(d), EXACT, "accept d=" + d);
      double[] residual = residual(p, q);
      for (int y = 0; y < LOGITS.length; y++) {
        double drawnGivenNotD = y == d ? 0
            : sampled.probability(y) / (1 - sampled.probability(d));
        if (p[d] < 1) {
          assertEquals(residual[y], drawnGivenNotD, EXACT, "d=" + d + ", y=" + y);
        }
      }
    }
  }

  /** Speculative sampling's acceptance probability of draft x ~ q: min(1, p(x) / q(x)). */
  private static double acceptance(double[] p, double[] q, int x) {
    return Math.min(1, p[x] / q[x]);
  }

  /** Speculative sampling's distribution on rejection: max(0, p − q), normalised. */
  private static double[] residual(double[] p, double[] q) {
    double[] r = new double[p.length];
    double sum = 0;
    for (int i = 0; i < p.length; i++) {
      r[i] = Math.max(0, p[i] - q[i]);
      sum += r[i];
    }
    for (int i = 0; i < p.length; i++) {
      r[i] /= sum;
    }
    return r;
  }

  /** softmax(logits / T), cut to the smallest most-likely-first set of mass >= topP. */
  private static double[] target(double temperature, double topP) {
    double[] p = new double[LOGITS.length];
    double sum = 0;
    for (int i = 0; i < p.length; i++) {
      p[i] = Math.exp(LOGITS[i] / temperature);
      sum += p[i];
    }
    Integer[] order = new Integer[p.length];
    for (int i = 0; i < p.length; i++) {
      p[i] /= sum;
      order[i] = i;
    }
    Arrays.sort(order, (a, b) -> Double.compare(p[b], p[a]));
    double mass = 0;
    double kept = 0;
    boolean[] keep = new boolean[p.length];
    for (int i : order) {
      if (mass >= topP && topP < 1) {
        break;
      }
      keep[i] = true;
      mass += p[i];
      kept += p[i];
    }
    for (int i = 0; i < p.length; i++) {
      p[i] = keep[i] ? p[i] / kept : 0;
    }
    return p;
  }
}
