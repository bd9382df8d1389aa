package dev.radixserve.model.sampling;

/**
 * Chooses the next token of one sequence from its logits. One instance per sequence: it keeps the
 * random state (seeded from {@link SamplingParams#seed()}) and the token counts the penalties need.
 * Logprobs are those of the raw model distribution (log-softmax of the logits before penalties and
 * temperature), as vLLM reports by default.
 */
public interface Sampler {

  /** Samples one token; {@code logits} may be modified in place. */
  SampledToken sample(float[] logits);

  /** Records a token the sequence now holds (prompt tokens at start, then each sampled one). */
  void accept(int tokenId, boolean isPrompt);
}
