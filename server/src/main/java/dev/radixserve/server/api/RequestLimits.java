package dev.radixserve.server.api;

import java.util.List;

/**
 * What one generation request may ask for, checked before anything is allocated in proportion
 * to it: a request that could never be served gets 400 naming the limit, never a place in the
 * queue. One sequence must fit the model length and the KV pool; the choices of one prompt must
 * fit one batch ({@code n <= max-num-seqs}); prompts × n and the stop strings are bounded.
 *
 * @param maxModelLen longest prompt + completion in tokens
 * @param maxNumSeqs sequences in one batch (the n choices of a prompt run together)
 * @param maxChoices prompts × n in one request
 * @param maxQueued waiting prompts the engine accepts (each prompt waits as one request)
 * @param maxStops stop strings in one request (OpenAI's limit)
 * @param maxStopLength characters in one stop string
 * @param blockSize tokens per KV block
 * @param totalBlocks blocks in the KV pool
 */
public record RequestLimits(int maxModelLen, int maxNumSeqs, int maxChoices, int maxQueued,
    int maxStops, int maxStopLength, int blockSize, int totalBlocks) {

  public static final int OPENAI_MAX_STOPS = 4;

  void checkChoices(int prompts, int n) {
    if (n > maxNumSeqs) {
      throw ApiException.badRequest("n", "n is " + n + " but at most " + maxNumSeqs
          + " sequences run together (max-num-seqs)");
    }
    if ((long) prompts * n > maxChoices) {
      throw ApiException.badRequest(prompts > 1 ? "prompt" : "n", "the request has " + prompts
          + " prompts and n = " + n + ": " + (long) prompts * n + " choices, over the limit of "
          + maxChoices + " (max-choices-per-request)");
    }
    if (prompts > maxQueued) {
      throw ApiException.badRequest("prompt", "the request has " + prompts + " prompts but at"
          + " most " + maxQueued + " can wait (max-queued-requests)");
    }
  }

  void checkStops(List<String> stops) {
    if (stops.size() > maxStops) {
      throw ApiException.badRequest("stop", "stop must be a string or a list of up to "
          + maxStops + " strings");
    }
    for (String s : stops) {
      if (s.length() > maxStopLength) {
        throw ApiException.badRequest("stop", "a stop string has " + s.length()
            + " characters; the limit is " + maxStopLength + " (max-stop-length)");
      }
    }
  }

  /** 400 when {@code maxTokens} alone leaves no room for a prompt. */
  void checkMaxTokens(Integer maxTokens, String param) {
    if (maxTokens != null && maxTokens >= maxModelLen) {
      throw ApiException.badRequest(param, param + " is " + maxTokens + " but this model's "
          + "maximum context length is " + maxModelLen + " tokens, prompt included");
    }
  }

  /** Most prompt tokens a request asking for {@code maxTokens} (null: any) may have. */
  int maxPromptTokens(Integer maxTokens) {
    return maxModelLen - (maxTokens == null ? 1 : maxTokens);
  }

  /** 400 for a prompt over {@link #maxPromptTokens}; {@code tokens} may be a lower bound. */
  ApiException promptTooLong(String param, String tokens, Integer maxTokens) {
    return ApiException.badRequest(param, "this model's maximum context length is " + maxModelLen
        + " tokens; the prompt has " + tokens + " and " + (maxTokens == null
        ? "no room is left for the completion" : maxTokens + " were requested for the completion"));
  }

  /**
   * The completion budget of one prompt of {@code promptTokens}: {@code maxTokens}, or all the
   * room left by the model length; 400 when the prompt and completion cannot fit the model or
   * one sequence of them cannot fit the whole KV pool.
   */
  public int maxTokensFor(int promptTokens, Integer maxTokens, String param) {
    if (promptTokens > maxPromptTokens(maxTokens)) {
      throw promptTooLong(param, Integer.toString(promptTokens), maxTokens);
    }
    int completion = maxTokens == null ? maxModelLen - promptTokens : maxTokens;
    long blocks = ((long) promptTokens + completion + blockSize - 1) / blockSize;
    if (blocks > totalBlocks) {
      throw ApiException.badRequest("max_tokens", "the request needs " + blocks
          + " KV blocks for " + promptTokens + " prompt + " + completion
          + " completion tokens but the pool has only " + totalBlocks);
    }
    return completion;
  }
}
