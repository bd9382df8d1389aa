package dev.radixserve.server.engine;

/** A submit the engine refused before queueing it. */
public final class EngineRejectedException extends RuntimeException {

  public enum Reason { QUEUE_FULL, SHUTTING_DOWN }

  private final Reason reason;

  public EngineRejectedException(Reason reason, String message) {
    super(message);
    this.reason = reason;
  }

  public Reason reason() {
    return reason;
  }
}
