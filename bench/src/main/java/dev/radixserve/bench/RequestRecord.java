package dev.radixserve.bench;

import java.util.List;

/**
 * What one request measured. Times are milliseconds; {@code ttftMs} is null for a failed request.
 *
 * @param index the request's place in the workload's planned order
 * @param session its session (conversation, agent)
 * @param turn its turn within the session
 * @param sendOrder the order it was actually sent in (0-based)
 * @param promptTokens prompt length sent (token ids, so exact)
 * @param success whether a complete stream came back
 * @param error why not, or null
 * @param startMs when it was sent, from the start of the run
 * @param ttftMs time to the first content chunk
 * @param itlMs gaps between successive content chunks
 * @param e2eMs time to the end of the stream (or the failure)
 * @param outputTokens {@code usage.completion_tokens}, or the content chunks without usage
 * @param contentChunks chunks with a choice
 * @param usagePromptTokens {@code usage.prompt_tokens} as the server reported it, or null
 * @param cachedTokens {@code usage.prompt_tokens_details.cached_tokens}; 0 when not reported
 * @param cachedTokensReported whether the server reported cached tokens at all
 */
public record RequestRecord(
    int index,
    int session,
    int turn,
    int sendOrder,
    int promptTokens,
    boolean success,
    String error,
    double startMs,
    Double ttftMs,
    List<Double> itlMs,
    double e2eMs,
    int outputTokens,
    int contentChunks,
    Integer usagePromptTokens,
    int cachedTokens,
    boolean cachedTokensReported) {

  public RequestRecord {
    itlMs = List.copyOf(itlMs);
  }

  static RequestRecord failed(BenchRequest r, int sendOrder, String error, double startMs,
      double e2eMs) {
    return new RequestRecord(r.index(), r.session(), r.turn(), sendOrder, r.promptLength(), false,
        error, startMs, null, List.of(), e2eMs, 0, 0, null, 0, false);
  }
}
