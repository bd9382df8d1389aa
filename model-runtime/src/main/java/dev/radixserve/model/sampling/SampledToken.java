package dev.radixserve.model.sampling;

import java.util.List;

/**
 * The token a sampler chose, with log-probabilities from the raw model distribution
 * (log-softmax of the unmodified logits, before penalties and temperature; see {@link Sampler}).
 *
 * @param tokenId chosen token
 * @param logprob its log-probability (NaN when not requested)
 * @param top the most likely alternatives, best first (empty when not requested)
 */
public record SampledToken(int tokenId, float logprob, List<TokenLogprob> top) {

  public SampledToken {
    top = List.copyOf(top);
  }

  public record TokenLogprob(int tokenId, float logprob) {}
}
