package dev.radixserve.server.spec;

/**
 * What a forward step takes by how many tokens it computes, as this server measures its own
 * steps: a moving average per token count up to {@value #ROWS}, so the speculator can price a
 * draft before proposing it. Whether verifying k draft tokens costs "about one step" depends on
 * the hardware: where a step is bound by reading the weights it does, but on a CPU whose 8-bit
 * kernels are compute-bound at a few rows (2 AVX2 cores: 9 rows with their logits cost 4.2 decode
 * steps of a 1B int8 model) a long draft costs several steps, and only a likely one pays.
 *
 * <p>Counts never measured are estimated from their neighbours: linearly between two measured
 * counts, beyond the largest along the slope of the last two (never falling), flat where only one
 * is known (the first draft then measures its own count), and proportionally to the tokens beyond
 * {@value #ROWS}. With nothing measured every count costs the same, which leaves draft lengths to
 * the acceptance alone. Engine thread only.
 */
public final class StepTimes {

  /** Token counts tracked one by one; larger steps are priced in proportion to their tokens. */
  public static final int ROWS = 64;
  /** Weight of a new measurement in its count's average: steps vary with context and load. */
  static final double ALPHA = 0.2;

  private final double[] nanos = new double[ROWS + 1];

  /** A step of {@code tokens} tokens took {@code elapsedNanos}. */
  public void record(int tokens, long elapsedNanos) {
    if (tokens < 1 || tokens > ROWS || elapsedNanos <= 0) {
      return;
    }
    double old = nanos[tokens];
    nanos[tokens] = old == 0 ? elapsedNanos : old + ALPHA * (elapsedNanos - old);
  }

  /** The expected time of a step of {@code tokens} tokens in nanoseconds; 1 if none measured. */
  public double estimate(int tokens) {
    if (tokens > ROWS) {
      return estimate(ROWS) * tokens / ROWS;
    }
    int t = Math.max(1, tokens);
    if (nanos[t] > 0) {
      return nanos[t];
    }
    int lo = t - 1;
    while (lo >= 1 && nanos[lo] == 0) {
      lo--;
    }
    int hi = t + 1;
    while (hi <= ROWS && nanos[hi] == 0) {
      hi++;
    }
    if (lo >= 1 && hi <= ROWS) {
      return nanos[lo] + (nanos[hi] - nanos[lo]) * (t - lo) / (hi - lo);
    }
    if (hi <= ROWS) {
      return nanos[hi];
    }
    if (lo < 1) {
      return 1;
    }
    int below = lo - 1;
    while (below >= 1 && nanos[below] == 0) {
      below--;
    }
    if (below < 1) {
      return nanos[lo];
    }
    double slope = Math.max(0, (nanos[lo] - nanos[below]) / (lo - below));
    return nanos[lo] + slope * (t - lo);
  }
}
