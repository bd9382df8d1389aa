package dev.radixserve.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads the events of one streamed {@code /v1/completions} response, as vLLM's benchmark does:
 * every chunk with a non-empty {@code choices} array is a content chunk (the first one sets the
 * time to first token, later ones add an inter-token gap); the chunk with {@code usage} (sent
 * last, with empty choices, under {@code include_usage}) gives token counts and
 * {@code prompt_tokens_details.cached_tokens}; {@code [DONE]} ends the stream; an {@code error}
 * object fails the request.
 */
final class StreamAccumulator {

  private static final ObjectMapper JSON = new ObjectMapper();

  private final long startNanos;
  private long firstContentNanos;
  private long lastContentNanos;
  private int contentChunks;
  private final List<Double> gapsMs = new ArrayList<>();
  private Integer usagePromptTokens;
  private Integer usageCompletionTokens;
  private Integer cachedTokens;
  private boolean done;
  private String error;

  StreamAccumulator(long startNanos) {
    this.startNanos = startNanos;
  }

  /** Takes one event's data, received at {@code nowNanos}. */
  void accept(String data, long nowNanos) {
    if (data.equals("[DONE]")) {
      done = true;
      return;
    }
    JsonNode chunk;
    try {
      chunk = JSON.readTree(data);
    } catch (Exception e) {
      error = "unparseable stream chunk: " + abbreviate(data);
      return;
    }
    if (chunk.hasNonNull("error")) {
      JsonNode e = chunk.get("error");
      error = e.hasNonNull("message") ? e.get("message").asText() : e.toString();
      return;
    }
    JsonNode choices = chunk.path("choices");
    if (choices.isArray() && !choices.isEmpty()) {
      if (contentChunks == 0) {
        firstContentNanos = nowNanos;
      } else {
        gapsMs.add((nowNanos - lastContentNanos) / 1e6);
      }
      lastContentNanos = nowNanos;
      contentChunks++;
    }
    JsonNode usage = chunk.path("usage");
    if (usage.isObject()) {
      usagePromptTokens = intOrNull(usage.path("prompt_tokens"));
      usageCompletionTokens = intOrNull(usage.path("completion_tokens"));
      cachedTokens = intOrNull(usage.path("prompt_tokens_details").path("cached_tokens"));
    }
  }

  void fail(String message) {
    error = message;
  }

  boolean done() {
    return done;
  }

  /** The record of this request, completed at {@code endNanos}. */
  RequestRecord toRecord(BenchRequest request, int sendOrder, long benchStartNanos, long endNanos) {
    String failure = error;
    if (failure == null && contentChunks == 0) {
      failure = "stream ended without any content chunk";
    }
    if (failure == null && !done) {
      failure = "stream ended without data: [DONE]";
    }
    boolean ok = failure == null;
    int outputTokens = usageCompletionTokens != null ? usageCompletionTokens : contentChunks;
    return new RequestRecord(request.index(), request.session(), request.turn(), sendOrder,
        request.promptLength(), ok, failure,
        (startNanos - benchStartNanos) / 1e6,
        ok ? (firstContentNanos - startNanos) / 1e6 : null,
        ok ? List.copyOf(gapsMs) : List.of(),
        (endNanos - startNanos) / 1e6,
        ok ? outputTokens : 0, contentChunks, usagePromptTokens,
        ok && cachedTokens != null ? cachedTokens : 0, cachedTokens != null);
  }

  private static Integer intOrNull(JsonNode n) {
    return n.isNumber() ? n.asInt() : null;
  }

  private static String abbreviate(String s) {
    return s.length() <= 200 ? s : s.substring(0, 200) + "...";
  }
}
