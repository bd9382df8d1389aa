package dev.radixserve.server.engine;

import dev.radixserve.model.constraint.TokenConstraint;
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
 * @param maxTokens tokens to generate at most per choice; 0 computes the prompt only (echo that
 *     scores it) and ends every choice with finish reason length
 * @param ignoreEos keep generating past the EOS token
 * @param namespace prefix-cache partition (the cache salt); {@code ""} by default
 * @param sink where results go
 * @param promptLogprobs score every prompt token too ({@link TokenSink#onPromptLogprobs}), with
 *     {@code params.topLogprobs()} alternatives; such a request computes its whole prompt (it
 *     reuses no cached prefix, whose logits are gone)
 * @param client who sent it (the operator's client-id header, else the connection): admission
 *     shares sequence slots fairly between clients ({@link FairShare})
 * @param priority lower runs first (vLLM's {@code priority}), within its client's fair share
 * @param constraint structured output: each choice's tokens are sampled under its mask, and a
 *     choice ends ({@link FinishReason#COMPLETE}) once its output is complete and nothing may
 *     follow; null for free text. The prompt and the prefix cache do not depend on it.
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
    TokenSink sink,
    boolean promptLogprobs,
    String client,
    int priority,
    TokenConstraint constraint) {

  public EngineRequest {
    if (promptTokens.length == 0) {
      throw new IllegalArgumentException("prompt must have at least one token");
    }
    if (n < 1) {
      throw new IllegalArgumentException("n must be >= 1, got " + n);
    }
    if (client == null) {
      throw new IllegalArgumentException("client must not be null");
    }
    if (maxTokens < 0) {
      throw new IllegalArgumentException("max_tokens must be >= 0, got " + maxTokens);
    }
  }

  /** A request without a constraint. */
  public EngineRequest(String id, String group, int[] promptTokens, SamplingParams params, int n,
      int maxTokens, boolean ignoreEos, String namespace, TokenSink sink, boolean promptLogprobs,
      String client, int priority) {
    this(id, group, promptTokens, params, n, maxTokens, ignoreEos, namespace, sink, promptLogprobs,
        client, priority, null);
  }

  /** A request of its own client ({@code group}) at the default priority 0. */
  public EngineRequest(String id, String group, int[] promptTokens, SamplingParams params, int n,
      int maxTokens, boolean ignoreEos, String namespace, TokenSink sink, boolean promptLogprobs) {
    this(id, group, promptTokens, params, n, maxTokens, ignoreEos, namespace, sink, promptLogprobs,
        group, 0, null);
  }

  /** A request without prompt logprobs. */
  public EngineRequest(String id, String group, int[] promptTokens, SamplingParams params, int n,
      int maxTokens, boolean ignoreEos, String namespace, TokenSink sink) {
    this(id, group, promptTokens, params, n, maxTokens, ignoreEos, namespace, sink, false);
  }

  /** The same request in another cache namespace. */
  public EngineRequest withNamespace(String other) {
    return new EngineRequest(id, group, promptTokens, params, n, maxTokens, ignoreEos, other, sink,
        promptLogprobs, client, priority, constraint);
  }
}
