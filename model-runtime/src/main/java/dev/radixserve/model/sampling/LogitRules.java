package dev.radixserve.model.sampling;

import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Per-request edits of the logits before sampling, with vLLM's semantics (its {@code
 * SamplingParams}: {@code logit_bias}, {@code min_tokens}, {@code allowed_token_ids}, {@code
 * bad_words}). They come before the penalties and the filters, and, since each is an addition
 * or a {@code -inf}, their order against a structured-output mask changes nothing. Logprobs stay
 * those of the raw model distribution (before these edits), as vLLM reports by default.
 *
 * @param logitBias token id → bias in [-100, 100] added to its logit (OpenAI's {@code logit_bias})
 * @param minTokens until this many tokens are generated, the {@code heldEnds} cannot be sampled
 * @param heldEnds the tokens {@code minTokens} holds back: the EOS ids (unless the request ignores
 *     EOS) and the stop token ids; filled by the engine, which knows the EOS ids
 * @param allowedTokenIds when not null, every other token is ruled out
 * @param badWords token sequences that may not be generated: the last token of each is ruled out
 *     where the output ends with the others (one-token words: everywhere)
 */
public record LogitRules(
    Map<Integer, Float> logitBias,
    int minTokens,
    Set<Integer> heldEnds,
    Set<Integer> allowedTokenIds,
    List<int[]> badWords) {

  public static final LogitRules NONE = new LogitRules(Map.of(), 0, Set.of(), null, List.of());

  public LogitRules {
    logitBias = Map.copyOf(logitBias);
    heldEnds = Set.copyOf(heldEnds);
    allowedTokenIds = allowedTokenIds == null ? null : Set.copyOf(allowedTokenIds);
    badWords = List.copyOf(badWords);
    for (var e : logitBias.entrySet()) {
      if (!(e.getValue() >= -100) || e.getValue() > 100) {
        throw new IllegalArgumentException("logit_bias values must be in [-100, 100], got "
            + e.getValue() + " for token " + e.getKey());
      }
    }
    if (minTokens < 0) {
      throw new IllegalArgumentException("min_tokens must be >= 0, got " + minTokens);
    }
    if (allowedTokenIds != null && allowedTokenIds.isEmpty()) {
      throw new IllegalArgumentException("allowed_token_ids must not be empty");
    }
    for (int[] w : badWords) {
      if (w.length == 0) {
        throw new IllegalArgumentException("bad_words must not hold an empty word");
      }
    }
  }

  /** The same rules with the tokens that {@code minTokens} holds back. */
  public LogitRules withHeldEnds(Set<Integer> ends) {
    return new LogitRules(logitBias, minTokens, ends, allowedTokenIds, badWords);
  }

  public boolean isNone() {
    return logitBias.isEmpty() && minTokens == 0 && allowedTokenIds == null && badWords.isEmpty();
  }

  /**
   * Applies the rules to {@code logits} in place, for a sequence whose output so far is {@code
   * output} (its first {@code outputLength} entries).
   */
  void apply(float[] logits, int[] output, int outputLength) {
    if (allowedTokenIds != null) {
      for (int i = 0; i < logits.length; i++) {
        if (!allowedTokenIds.contains(i)) {
          logits[i] = Float.NEGATIVE_INFINITY;
        }
      }
    }
    for (int[] word : badWords) {
      int prefix = word.length - 1;
      if (prefix > outputLength) {
        continue;
      }
      boolean match = true;
      for (int k = 0; k < prefix && match; k++) {
        match = output[outputLength - prefix + k] == word[k];
      }
      if (match) {
        logits[word[prefix]] = Float.NEGATIVE_INFINITY;
      }
    }
    if (outputLength < minTokens) {
      for (int id : heldEnds) {
        if (id < logits.length) {
          logits[id] = Float.NEGATIVE_INFINITY;
        }
      }
    }
    logitBias.forEach((id, bias) -> logits[id] += bias);
  }
}
