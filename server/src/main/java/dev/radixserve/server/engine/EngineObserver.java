package dev.radixserve.server.engine;

/** What the engine reports for metrics. Called on the engine thread; must not block. */
public interface EngineObserver {

  EngineObserver NONE = new EngineObserver() {};

  /** First admission of a request: its queue time and its prefix-cache lookup. */
  default void admitted(long queueNanos, int queriedTokens, int hitTokens) {}

  /** Prompt (prefill) tokens computed by the model in one step, recomputation included. */
  default void promptTokensComputed(int tokens) {}

  default void firstToken(long sinceArrivalNanos) {}

  default void interToken(long nanos) {}

  default void tokensGenerated(int tokens) {}

  default void finished(FinishReason reason, long sinceArrivalNanos) {}

  default void preempted() {}

  /** A running sequence was preempted to give its slot to a client below its fair share. */
  default void fairSharePreempted() {}

  /**
   * A sequence was admitted ahead of an earlier waiting sequence of another client because of
   * the fair share (that one's admission was deferred).
   */
  default void fairShareDeferred() {}

  default void evicted(int blocks) {}

  /**
   * A step verified {@code drafted} draft tokens of one sequence and the model agreed with the
   * first {@code accepted} of them (speculative decoding).
   */
  default void speculated(int drafted, int accepted) {}

  /**
   * A sequence was admitted (again after a preemption too) with this prefix-cache match; only
   * with prefix caching on.
   *
   * @param nodeId the deepest matched node (a namespace root's id when nothing matched)
   * @param matchedTokens tokens reused from the cache
   * @param queriedTokens tokens looked up (the prompt less its last token)
   */
  default void prefixMatched(String requestId, int choice, String namespace, long nodeId,
      int matchedTokens, int queriedTokens) {}

  /** Tells {@code first}, then {@code second}, about everything. */
  static EngineObserver both(EngineObserver first, EngineObserver second) {
    return new ObserverPair(first, second);
  }
}
