package dev.radixserve.server.api;

import dev.radixserve.model.constraint.TokenConstraint;
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
 * @param constraint structured output (response_format, guided_*, a forced tool call); null for
 *     free text
 * @param tools chat tools when calls may be made (tool_choice other than none); null otherwise
 * @param reasoning chat with a reasoning parser: where the reply starts (reasoning or content);
 *     null: no split, the reply is all content
 * @param includeReasoning vLLM's {@code include_reasoning}: false leaves the reasoning out of
 *     the response
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
    int priority,
    TokenConstraint constraint,
    Tools tools,
    ReasoningSyntax.Start reasoning,
    boolean includeReasoning) {}
