package dev.radixserve.server.api;

import dev.radixserve.model.sampling.SamplingParams;
import java.util.List;

/**
 * A validated completions or chat request.
 *
 * @param prompts one token list per prompt (chat: one)
 * @param maxTokens null: up to the model length
 * @param logprobs completions: top alternatives to report (null: none); chat: top_logprobs when
 *     logprobs is true
 * @param priority vLLM's {@code priority}: lower runs first, within the client's fair share
 */
public record GenerationRequest(
    boolean chat,
    List<int[]> prompts,
    SamplingParams params,
    int n,
    Integer maxTokens,
    List<String> stop,
    boolean ignoreEos,
    boolean stream,
    boolean includeUsage,
    boolean echo,
    Integer logprobs,
    String namespace,
    String user,
    int priority) {}
