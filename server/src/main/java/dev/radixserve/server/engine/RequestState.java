package dev.radixserve.server.engine;

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
  /** Its choices still waiting or running. */
  final java.util.List<Sequence> live = new java.util.ArrayList<>();

  RequestState(EngineRequest request, long arrivalNanos) {
    this.request = request;
    this.arrivalNanos = arrivalNanos;
    this.unfinishedChoices = request.n();
  }
}
