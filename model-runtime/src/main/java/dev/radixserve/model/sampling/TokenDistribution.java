package dev.radixserve.model.sampling;

import java.util.Arrays;

/**
 * The distribution a sampler draws one token from: candidate ids with unnormalised weights (what
 * temperature, min-p, top-k and top-p leave of the softmax). Speculative decoding's verification
 * is stated in its terms: a draft token d is accepted with probability {@code probability(d)}.
 *
 * @param ids candidate token ids, in draw order
 * @param weights each candidate's weight (0 where its exponential underflows)
 * @param total the weights' sum, as the draw accumulates it
 */
public record TokenDistribution(int[] ids, double[] weights, double total) {

  public TokenDistribution {
    if (ids.length == 0 || ids.length != weights.length) {
      throw new IllegalArgumentException(ids.length + " ids with " + weights.length + " weights");
    }
  }

  /** All the mass on {@code token} (greedy decoding). */
  public static TokenDistribution point(int token) {
    return new TokenDistribution(new int[] {token}, new double[] {1}, 1);
  }

  /** The probability of drawing {@code token}: 0 when it is no candidate. */
  public double probability(int token) {
    for (int i = 0; i < ids.length; i++) {
      if (ids[i] == token) {
        return weights[i] / total;
      }
    }
    return 0;
  }

  /**
   * The token at {@code u} of the cumulative weights (inverse-transform sampling).
   *
   * @param u uniform in [0, 1)
   */
  public int draw(double u) {
    double left = u * total;
    for (int i = 0; i < ids.length; i++) {
      left -= weights[i];
      if (left < 0) {
        return ids[i];
      }
    }
    return ids[ids.length - 1]; // rounding left a hair above zero
  }

  @Override
  public String toString() {
    return "TokenDistribution" + Arrays.toString(ids) + Arrays.toString(weights);
  }
}
