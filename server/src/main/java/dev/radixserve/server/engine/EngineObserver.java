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

  default void evicted(int blocks) {}
}
