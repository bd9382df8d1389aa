package dev.radixserve.server.engine;

import dev.radixserve.model.sampling.SamplingParams;

/**
 * One prompt to complete, validated and tokenized by the HTTP layer. Stop strings are not the
 * engine's business: the HTTP layer detokenizes and ends a choice with {@link Engine#finishChoice}.
 *
 * @param id unique request id (also the abort key)
 * @param group the client request this prompt belongs to; admission is fair between groups, so
 *     one request with many prompts does not hold up the requests that arrive after it
 * @param promptTokens at least one token
 * @param params sampling settings; choice {@code i > 0} uses seed {@code seed + i}
 * @param n choices; they share the prompt's KV blocks (prefilled once, forked after)
 * @param maxTokens tokens to generate at most per choice, at least 1
 * @param ignoreEos keep generating past the EOS token
 * @param namespace prefix-cache partition (the cache salt); {@code ""} by default
 * @param sink where results go
 */
public record EngineRequest(
    String id,
    String group,
    int[] promptTokens,
    SamplingParams params,
    int n,
    int maxTokens,
    boolean ignoreEos,
    String namespace,
    TokenSink sink) {

  public EngineRequest {
    if (promptTokens.length == 0) {
      throw new IllegalArgumentException("prompt must have at least one token");
    }
    if (n < 1) {
      throw new IllegalArgumentException("n must be >= 1, got " + n);
    }
    if (maxTokens < 1) {
      throw new IllegalArgumentException("max_tokens must be >= 1, got " + maxTokens);
    }
  }
}
