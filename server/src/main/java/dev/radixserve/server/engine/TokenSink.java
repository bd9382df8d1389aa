package dev.radixserve.server.engine;

import dev.radixserve.model.sampling.SampledToken;
import java.util.List;

/**
 * Where the engine delivers one request's results. Called on the engine thread only, so an
 * implementation must not block: the HTTP layer hands each call over to its channel's event loop.
 *
 * <p>Per request: one {@link #onPromptLogprobs} call before any output when the request asked
 * for prompt logprobs, any number of {@link #onOutput} calls (each choice ends with one carrying a
 * finish reason), then exactly one of {@link #onComplete} or {@link #onError}. A request aborted
 * by its client gets no further call.
 */
public interface TokenSink {

  /**
   * The prompt's tokens scored by the model: entry {@code i} is prompt token {@code i + 1} with
   * its log-probability given the tokens before it and the best alternatives there (the first
   * prompt token has no context, so it has no entry).
   */
  default void onPromptLogprobs(List<SampledToken> scored) {}

  void onOutput(ChoiceOutput output);

  /** Every choice has finished. */
  void onComplete(RequestUsage usage);

  /**
   * The request failed inside the engine or was cut off by shutdown.
   *
   * @param httpStatus 500 for internal failures, 503 when the server shuts down
   */
  void onError(int httpStatus, String message);
}
