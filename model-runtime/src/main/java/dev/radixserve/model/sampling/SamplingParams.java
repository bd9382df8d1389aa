package dev.radixserve.model.sampling;

import java.util.Set;

/**
 * Per-request sampling settings, OpenAI/vLLM semantics. Validated at the boundary (the HTTP
 * layer maps {@link IllegalArgumentException} to 400).
 *
 * @param temperature 0 means greedy (argmax)
 * @param topK {@code 0} disables top-k; otherwise keep the k most likely tokens
 * @param topP nucleus mass in (0, 1]; 1 disables
 * @param minP drop tokens below minP * max probability; 0 disables
 * @param seed per-request seed; null draws one (then outputs are not reproducible)
 * @param repetitionPenalty HF-style multiplicative penalty on tokens seen in prompt or output; 1 disables
 * @param presencePenalty subtracted once from logits of tokens present in the output
 * @param frequencyPenalty subtracted per occurrence in the output
 * @param stopTokenIds generation stops after sampling one of these (the token is not returned as text)
 * @param topLogprobs 0 for none; otherwise how many alternatives to report per token (max 20)
 * @param logprobs whether to report the sampled token's logprob
 * @param rules logit bias, min tokens, allowed tokens, bad words ({@link LogitRules})
 */
public record SamplingParams(
    double temperature,
    int topK,
    double topP,
    double minP,
    Long seed,
    double repetitionPenalty,
    double presencePenalty,
    double frequencyPenalty,
    Set<Integer> stopTokenIds,
    boolean logprobs,
    int topLogprobs,
    LogitRules rules) {

  public static final int MAX_TOP_LOGPROBS = 20;

  /** Settings without {@link LogitRules}. */
  public SamplingParams(double temperature, int topK, double topP, double minP, Long seed,
      double repetitionPenalty, double presencePenalty, double frequencyPenalty,
      Set<Integer> stopTokenIds, boolean logprobs, int topLogprobs) {
    this(temperature, topK, topP, minP, seed, repetitionPenalty, presencePenalty,
        frequencyPenalty, stopTokenIds, logprobs, topLogprobs, LogitRules.NONE);
  }

  public SamplingParams {
    stopTokenIds = Set.copyOf(stopTokenIds);
    if (rules == null) {
      throw new IllegalArgumentException("rules must not be null (LogitRules.NONE for none)");
    }
    if (!(temperature >= 0) || temperature > 100) {
      throw new IllegalArgumentException("temperature must be in [0, 100], got " + temperature);
    }
    if (topK < 0) {
      throw new IllegalArgumentException("top_k must be >= 0 (0 disables), got " + topK);
    }
    if (!(topP > 0) || topP > 1) {
      throw new IllegalArgumentException("top_p must be in (0, 1], got " + topP);
    }
    if (!(minP >= 0) || minP > 1) {
      throw new IllegalArgumentException("min_p must be in [0, 1], got " + minP);
    }
    if (!(repetitionPenalty > 0) || repetitionPenalty > 10) {
      throw new IllegalArgumentException("repetition_penalty must be in (0, 10], got " + repetitionPenalty);
    }
    if (!(presencePenalty >= -2) || presencePenalty > 2) {
      throw new IllegalArgumentException("presence_penalty must be in [-2, 2], got " + presencePenalty);
    }
    if (!(frequencyPenalty >= -2) || frequencyPenalty > 2) {
      throw new IllegalArgumentException("frequency_penalty must be in [-2, 2], got " + frequencyPenalty);
    }
    if (topLogprobs < 0 || topLogprobs > MAX_TOP_LOGPROBS) {
      throw new IllegalArgumentException(
          "top_logprobs must be in [0, " + MAX_TOP_LOGPROBS + "], got " + topLogprobs);
    }
  }

  public static SamplingParams greedy() {
    return new SamplingParams(0, 0, 1, 0, null, 1, 0, 0, Set.of(), false, 0);
  }

  /** The same settings with other {@link LogitRules}. */
  public SamplingParams withRules(LogitRules other) {
    return new SamplingParams(temperature, topK, topP, minP, seed, repetitionPenalty,
        presencePenalty, frequencyPenalty, stopTokenIds, logprobs, topLogprobs, other);
  }

  public boolean isGreedy() {
    return temperature == 0;
  }
}
