package dev.radixserve.server.engine;

import dev.radixserve.model.sampling.SampledToken;

/** Per-request bookkeeping shared by its choices (engine thread only). */
final class RequestState {

  final EngineRequest request;
  final long arrivalNanos;
  int unfinishedChoices;
  int completionTokens;
  /** Prompt tokens matched in the cache at first admission. */
  int cachedTokens;
  boolean admitted;
  boolean firstTokenSeen;
  /**
   * Prompt logprobs by prompt position (entry 0 unused) while choice 0 computes its prompt; null
   * when not requested or once delivered.
   */
  SampledToken[] promptLogprobs;
  /** Its choices still waiting or running. */
  final java.util.List<Sequence> live = new java.util.ArrayList<>();

  RequestState(EngineRequest request, long arrivalNanos) {
    this.request = request;
    this.arrivalNanos = arrivalNanos;
    this.unfinishedChoices = request.n();
    if (request.promptLogprobs()) {
      promptLogprobs = new SampledToken[request.promptTokens().length];
    }
  }
}
