package dev.radixserve.model.constraint;

import java.util.Arrays;
import java.util.Set;

/**
 * Where one sequence stands in its constraint: masks its logits before sampling and advances
 * with each sampled token. Owned by one sequence (the engine thread); not thread-safe.
 */
public final class ConstraintState {

  private final TokenConstraint constraint;
  private int state;
  private boolean ended; // an end-of-sequence token was taken in an accepting state

  ConstraintState(TokenConstraint constraint, int state) {
    this.constraint = constraint;
    this.state = state;
  }

  /**
   * Sets every logit the constraint forbids to -inf. The end-of-sequence tokens {@code eos} stay
   * allowed only where the output so far is complete (an accepting state).
   *
   * @return false when no token at all is allowed (the vocabulary cannot go on; never for a
   *     byte-level vocabulary, which has every single byte)
   */
  public boolean mask(float[] logits, Set<Integer> eos) {
    boolean accepting = constraint.accepting(state);
    float[] kept = null;
    if (accepting && !eos.isEmpty()) {
      kept = new float[eos.size()];
      int i = 0;
      for (int id : eos) {
        kept[i++] = id < logits.length ? logits[id] : 0;
      }
    }
    long[] bits = constraint.allowed(state);
    int n = Math.min(logits.length, constraint.vocabSize());
    boolean any = false;
    for (int w = 0; w < bits.length; w++) {
      long word = bits[w];
      int base = w << 6;
      if (word == -1L) {
        any = true;
        continue;
      }
      int end = Math.min(base + 64, n);
      if (word == 0) {
        if (base < end) {
          Arrays.fill(logits, base, end, Float.NEGATIVE_INFINITY);
        }
        continue;
      }
      any = true;
      // only the forbidden ids, by their bits: no branch per id to mispredict
      long forbidden = ~word & (end - base == 64 ? -1L : (1L << (end - base)) - 1);
      while (forbidden != 0) {
        logits[base + Long.numberOfTrailingZeros(forbidden)] = Float.NEGATIVE_INFINITY;
        forbidden &= forbidden - 1;
      }
    }
    if (logits.length > n) {
      Arrays.fill(logits, n, logits.length, Float.NEGATIVE_INFINITY);
    }
    if (kept != null) {
      int i = 0;
      for (int id : eos) {
        if (id < logits.length) {
          logits[id] = kept[i];
        }
        i++;
      }
      any = true;
    }
    return any;
  }

  /**
   * Takes the sampled token. An end-of-sequence token ends the output (it is allowed only where
   * the output is complete).
   *
   * @throws IllegalStateException for a token the mask forbade
   */
  public void advance(int token, Set<Integer> eos) {
    if (eos.contains(token) && constraint.accepting(state)) {
      ended = true;
      return;
    }
    int s = constraint.step(state, token);
    if (s < 0) {
      throw new IllegalStateException("token " + token + " is not allowed in state " + state
          + " of the constraint");
    }
    state = s;
  }

  /** The output is complete and nothing may follow: the choice ends here ({@code stop}). */
  public boolean isComplete() {
    return ended || (constraint.accepting(state) && !constraint.hasNext(state));
  }
}
