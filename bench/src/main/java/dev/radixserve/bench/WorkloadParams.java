package dev.radixserve.bench;

/**
 * What a workload generator may vary.
 *
 * @param seed seeds every token id; the same seed gives the same prompts
 * @param numRequests requested size, or null for the workload's default (the published
 *     scenarios have fixed counts and ignore it)
 * @param maxTokens output tokens per request; multi-turn and agent workloads append synthetic
 *     answers of this length, and every prompt must leave room for them
 * @param maxModelLen the server's context (prompt + output); GPT-2's is 1,024
 */
public record WorkloadParams(long seed, Integer numRequests, int maxTokens, int maxModelLen) {

  public WorkloadParams {
    if (numRequests != null && numRequests < 1) {
      throw new IllegalArgumentException("--num-requests must be >= 1, got " + numRequests);
    }
    if (maxTokens < 1) {
      throw new IllegalArgumentException("--max-tokens must be >= 1, got " + maxTokens);
    }
    if (maxModelLen < 2) {
      throw new IllegalArgumentException("--max-model-len must be >= 2, got " + maxModelLen);
    }
  }

  int requestsOr(int fallback) {
    return numRequests == null ? fallback : numRequests;
  }

  /** Throws when a prompt of this length plus max_tokens would not fit the context. */
  void requireFits(String workload, int promptLength) {
    if (promptLength + maxTokens > maxModelLen) {
      throw new IllegalArgumentException(workload + ": longest prompt " + promptLength
          + " + max_tokens " + maxTokens + " exceeds --max-model-len " + maxModelLen
          + "; lower --max-tokens or --num-requests");
    }
  }
}
