package dev.radixserve.server.engine;

/** Two observers told the same things, in order (metrics and the cache view). */
record ObserverPair(EngineObserver first, EngineObserver second) implements EngineObserver {

  @Override
  public void admitted(long queueNanos, int queriedTokens, int hitTokens) {
    first.admitted(queueNanos, queriedTokens, hitTokens);
    second.admitted(queueNanos, queriedTokens, hitTokens);
  }

  @Override
  public void promptTokensComputed(int tokens) {
    first.promptTokensComputed(tokens);
    second.promptTokensComputed(tokens);
  }

  @Override
  public void firstToken(long sinceArrivalNanos) {
    first.firstToken(sinceArrivalNanos);
    second.firstToken(sinceArrivalNanos);
  }

  @Override
  public void interToken(long nanos) {
    first.interToken(nanos);
    second.interToken(nanos);
  }

  @Override
  public void tokensGenerated(int tokens) {
    first.tokensGenerated(tokens);
    second.tokensGenerated(tokens);
  }

  @Override
  public void finished(FinishReason reason, long sinceArrivalNanos) {
    first.finished(reason, sinceArrivalNanos);
    second.finished(reason, sinceArrivalNanos);
  }

  @Override
  public void fairSharePreempted() {
    first.fairSharePreempted();
    second.fairSharePreempted();
  }

  @Override
  public void fairShareDeferred() {
    first.fairShareDeferred();
    second.fairShareDeferred();
  }

  @Override
  public void preempted() {
    first.preempted();
    second.preempted();
  }

  @Override
  public void evicted(int blocks) {
    first.evicted(blocks);
    second.evicted(blocks);
  }

  @Override
  public void speculated(int drafted, int accepted) {
    first.speculated(drafted, accepted);
    second.speculated(drafted, accepted);
  }

  @Override
  public void prefixMatched(String requestId, int choice, String namespace, long nodeId,
      int matchedTokens, int queriedTokens) {
    first.prefixMatched(requestId, choice, namespace, nodeId, matchedTokens, queriedTokens);
    second.prefixMatched(requestId, choice, namespace, nodeId, matchedTokens, queriedTokens);
  }
}
