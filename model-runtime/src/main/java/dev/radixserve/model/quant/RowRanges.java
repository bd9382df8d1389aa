package dev.radixserve.model.quant;

import dev.radixserve.model.weights.Tensor;
import java.util.stream.IntStream;

/**
 * A weight's output rows made in ranges on the common pool, for the tensors large enough to be
 * worth it. Why: the load makes one tensor per task, and a tied 128k-row table (Llama-3.2-1B's LM
 * head, dequantized from Q6_K and quantized again to int8) is ~20 times a layer's work, so it ran
 * alone on one core for seconds after every other tensor was done (a 1B Q4_0 GGUF start: ~4 s of
 * its ~7 s of weights, the other core idle). Every row is made exactly as before, by the same
 * code into its own place; only which thread makes it changes.
 */
final class RowRanges {

  /** Weights a range holds at least; a tensor with fewer runs on the calling thread. */
  static final long MIN_WEIGHTS = 1L << 22;

  /** Makes the rows {@code [from, to)}, with scratch arrays of its own. */
  interface Range {
    void make(int from, int to);
  }

  private RowRanges() {}

  /** {@code rows} rows of {@code rowWeights} each, in ranges of at least {@link #MIN_WEIGHTS}. */
  static void forEach(int rows, long rowWeights, Range range) {
    forEach(rows, rowWeights, MIN_WEIGHTS, range);
  }

  /**
   * {@code weight}'s outputs as above, in ranges of at least {@code minWeights}; on the calling
   * thread alone where its rows may not be read from several threads ({@link
   * Tensor#rowsInParallel}).
   */
  static void forEach(Tensor weight, int rows, long rowWeights, long minWeights, Range range) {
    if (weight.rowsInParallel()) {
      forEach(rows, rowWeights, minWeights, range);
    } else {
      range.make(0, rows);
    }
  }

  /** As above, in ranges of at least {@code minWeights} (tests split small tensors too). */
  static void forEach(int rows, long rowWeights, long minWeights, Range range) {
    int per = (int) Math.min(rows, Math.max(1, minWeights / Math.max(1, rowWeights)));
    int ranges = per == 0 ? 0 : (rows + per - 1) / per;
    if (ranges <= 1) {
      range.make(0, rows);
      return;
    }
    // inside a load task (a common-pool thread) the ranges are forked beside the other tensors'
    // tasks; the caller helps until they are done
    IntStream.range(0, ranges).parallel()
        .forEach(r -> range.make(r * per, Math.min(rows, (r + 1) * per)));
  }
}
