package dev.radixserve.server.engine;

import java.util.concurrent.CompletableFuture;

/** What other threads send to the engine thread: its only way in. */
sealed interface EngineMessage {

  record Submit(EngineRequest request, long arrivalNanos) implements EngineMessage {}

  record Abort(String requestId) implements EngineMessage {}

  /** The client side ended one choice (a stop string); the engine retires it as finished. */
  record FinishChoice(String requestId, int choice) implements EngineMessage {}

  /** Aborts every request, telling each client {@code httpStatus} (shutdown). */
  record AbortAll(int httpStatus, String message) implements EngineMessage {}

  record ResetPrefixCache(CompletableFuture<Integer> freedBlocks) implements EngineMessage {}

  record Inspect(CompletableFuture<EngineSnapshot> snapshot) implements EngineMessage {}

  /** Runs a task between steps, where it may read engine state (diagnostics, test hooks). */
  record Run(Runnable task) implements EngineMessage {}

  record Stop() implements EngineMessage {}
}
