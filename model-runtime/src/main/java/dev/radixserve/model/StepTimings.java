package dev.radixserve.model;

/**
 * Where the time of one forward step went.
 *
 * @param prepareNanos Java: validating the batch, filling the input buffers, wrapping tensors
 * @param runNanos ONNX Runtime's {@code Run}
 * @param writeNanos Java: copying logits out and new keys/values into the pool
 */
public record StepTimings(long prepareNanos, long runNanos, long writeNanos) {

  public long totalNanos() {
    return prepareNanos + runNanos + writeNanos;
  }

  /** Share of the step spent in Java (preparing and writing), in [0, 1]. */
  public double javaShare() {
    long total = totalNanos();
    return total == 0 ? 0 : (double) (prepareNanos + writeNanos) / total;
  }
}
