package dev.radixserve.server.engine;

import dev.radixserve.model.sampling.SamplingParams;
import java.util.List;

/**
 * One prompt to complete, validated and tokenized by the HTTP layer.
 *
 * @param id unique request id (also the abort key)
 * @param promptTokens at least one token
 * @param params sampling settings; choice {@code i > 0} uses seed {@code seed + i}
 * @param n choices; they share the prompt's KV blocks (prefilled once, forked after)
 * @param maxTokens tokens to generate at most per choice; 0 computes the prompt only (echo that
 *     scores it) and ends every choice with finish reason length
 * @param stop stop strings (not included in the output)
 * @param ignoreEos keep generating past the EOS token
 * @param namespace prefix-cache partition (the cache salt); {@code ""} by default
 * @param sink where results go
 * @param promptLogprobs score every prompt token too ({@link TokenSink#onPromptLogprobs}), with
 *     {@code params.topLogprobs()} alternatives; such a request computes its whole prompt (it
 *     reuses no cached prefix, whose logits are gone)
 */
public record EngineRequest(
    String id,
    int[] promptTokens,
    SamplingParams params,
    int n,
    int maxTokens,
    List<String> stop,
    boolean ignoreEos,
    String namespace,
    TokenSink sink,
    boolean promptLogprobs) {

  public EngineRequest {
    if (promptTokens.length == 0) {
      throw new IllegalArgumentException("prompt must have at least one token");
    }
    if (n < 1) {
      throw new IllegalArgumentException("n must be >= 1, got " + n);
    }
    if (maxTokens < 0) {
      throw new IllegalArgumentException("max_tokens must be >= 0, got " + maxTokens);
    }
    stop = List.copyOf(stop);
  }

  /** A request without prompt logprobs. */
  public EngineRequest(String id, int[] promptTokens, SamplingParams params, int n, int maxTokens,
      List<String> stop, boolean ignoreEos, String namespace, TokenSink sink) {
    this(id, promptTokens, params, n, maxTokens, stop, ignoreEos, namespace, sink, false);
  }
}
