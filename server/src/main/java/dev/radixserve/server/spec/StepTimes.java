package dev.radixserve.server.spec;

import java.util.Arrays;

/**
 * What a forward step takes by how many tokens it computes, as this server measures its own
 * steps, so the speculator can price a draft before proposing it. Whether verifying k draft
 * tokens costs "about one step" depends on the hardware: where a step is bound by reading the
 * weights it does, but on a CPU whose 8-bit kernels are compute-bound at a few rows (2 AVX2 cores:
 * 9 rows with their logits cost 4.2 decode steps of a 1B int8 model) a long draft costs several
 * steps, and only a likely one pays.
 *
 * <p>The first step of each token count is not taken at all: it took about twice what the later
 * ones took (presumably ONNX Runtime planning memory for the new shape; 1B int8, AVX-512: a
 * 2-token step 66 ms, then 22 and 35 ms, decode 26 ms; 1B int4: a 2-token step 49 ms, then
 * 31-34 ms, decode 31 ms), and a count priced too dear is not drafted at again, so not measured
 * again. Where a one-token draft was tried early (the short-key guesses into a free row), that
 * one slow 2-token step, extrapolated, priced every longer draft out of a copy for the rest of a
 * request. Each count up to {@value #ROWS} then keeps its last {@value #SAMPLES} times and is
 * taken at their median (the lower one of an even number), so it follows a change of context or
 * load within a few steps and one slow step does not move it. And a step of more tokens never
 * costs less than one of fewer, so a count is taken at no more than any larger count measured.
 *
 * <p>Counts never measured are estimated from their neighbours: linearly between two measured
 * counts, beyond the largest along the slope of the last two (never falling), flat where only one
 * is known (the first drafts then measure their own count), and proportionally to the tokens beyond
 * {@value #ROWS}. With nothing measured every count costs the same, which leaves draft lengths to
 * the acceptance alone. Engine thread only.
 */
public final class StepTimes {

  /** Token counts tracked one by one; larger steps are priced in proportion to their tokens. */
  public static final int ROWS = 64;
  /** Times kept per count: a median of this many ignores a slow step or two. */
  static final int SAMPLES = 5;

  private final long[][] samples = new long[ROWS + 1][SAMPLES];
  /** Per count, the samples held (up to {@value #SAMPLES}) and the slot the next one takes. */
  private final int[] recorded = new int[ROWS + 1];
  private final int[] slot = new int[ROWS + 1];
  private final long[] medians = new long[ROWS + 1];
  /** Per count, its median capped by every larger count's; 0 where never measured. */
  private final double[] nanos = new double[ROWS + 1];
  private final long[] sorted = new long[SAMPLES];
  /** Per count, whether its first step (not taken) has run. */
  private final boolean[] shaped = new boolean[ROWS + 1];

  /** A step of {@code tokens} tokens took {@code elapsedNanos}. */
  public void record(int tokens, long elapsedNanos) {
    if (tokens < 1 || tokens > ROWS || elapsedNanos <= 0) {
      return;
    }
    if (!shaped[tokens]) {
      shaped[tokens] = true; // a new shape's first step: not what the count costs
      return;
    }
    samples[tokens][slot[tokens]] = elapsedNanos;
    slot[tokens] = (slot[tokens] + 1) % SAMPLES;
    recorded[tokens] = Math.min(recorded[tokens] + 1, SAMPLES); // a server runs for months
    int n = recorded[tokens];
    System.arraycopy(samples[tokens], 0, sorted, 0, n);
    Arrays.sort(sorted, 0, n);
    medians[tokens] = sorted[(n - 1) / 2];
    long cap = Long.MAX_VALUE;
    for (int t = ROWS; t >= 1; t--) {
      if (recorded[t] > 0) {
        cap = Math.min(cap, medians[t]);
        nanos[t] = cap;
      }
    }
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
    double slope = (nanos[lo] - nanos[below]) / (lo - below); // capped above: never negative
    return nanos[lo] + slope * (t - lo);
  }
}
