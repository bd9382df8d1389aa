package dev.radixserve.server.engine;

/**
 * Where the engine delivers one request's results. Called on the engine thread only, so an
 * implementation must not block: the HTTP layer hands each call over to its channel's event loop.
 *
 * <p>Per request: any number of {@link #onOutput} calls (each choice ends with one carrying a
 * finish reason), then exactly one of {@link #onComplete} or {@link #onError}. A request aborted
 * by its client gets no further call.
 */
public interface TokenSink {

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
