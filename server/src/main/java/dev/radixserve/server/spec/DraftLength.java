package dev.radixserve.server.spec;

/**
 * How many draft tokens one sequence verifies next, from how its recent drafts fared and what a
 * step of that many more tokens costs. A sequence starts at {@value #START}: a rejected draft
 * costs its verification, so the first ones are short until drafts prove to pay (a first draft
 * of the maximum made an early miss cost a step of 1 + max tokens). After a fully accepted draft
 * it asks for twice as many (up to the maximum), so a long copy reaches the maximum in a few
 * steps; after a partial one, for one more than were accepted; after {@value #MISSES_TO_PAUSE}
 * drafts in a row with nothing accepted it drafts nothing for a pause that doubles each time it
 * happens again (up to {@value #MAX_PAUSE} steps), then tries a single token. A step that
 * verifies k drafts costs about one decode step while decoding is bound by weight bytes, a little
 * more otherwise: so a sequence whose drafts stop paying decodes as if speculation were off, but
 * for a probe now and then.
 *
 * <p>The rules' length is then priced ({@link #next(StepTimes, int, double)}). Each token of a
 * draft is taken as held with the sequence's recent acceptance rate p, given the ones before it
 * held, so a draft of k yields 1 + p + ... + p^k tokens in expectation, at the step times measured
 * ({@link StepTimes}). A draft whose step is not expected to yield a tenth more tokens per
 * second than a step without it ({@link #MARGIN}) is shortened to the longest length that is,
 * possibly none, which pauses drafting as misses do. Where a step costs the same whatever its
 * tokens (bound by reading the weights) nearly every draft pays; where every token costs compute,
 * as in a batch of sequences on a CPU, only a likely one does.
 */
public final class DraftLength {

  /** Tokens of a sequence's first draft. */
  static final int START = 2;
  static final int MISSES_TO_PAUSE = 2;
  static final int MAX_PAUSE = 64;
  /**
   * Weight left to a verification's counts after the next one. Copying comes in bursts (a quote,
   * a block of unchanged code), inside which nearly every draft token holds and outside which few
   * do, so the last drafts count most.
   */
  static final double DECAY = 0.5;
  /**
   * How much more a step with a draft must be expected to yield per second than the step
   * without it. The odds come from the last few drafts and the prices from a few steps' times,
   * neither closer than about this; where a draft's expected gain is smaller it is as likely a
   * loss (measured on 2 AVX2 cores: drafts beside 1 to 3 other sequences gained at most ~5% by
   * the estimate and cost ~5% by the clock).
   */
  static final double MARGIN = 0.1;

  private final int max;
  private int next;
  private int misses;
  private int pause;
  private int pausing;
  private boolean probe;
  /** Decayed counts of draft tokens held and of drafts cut short by a rejected token. */
  private double held;
  private double cut;

  /** @param max most tokens one draft may hold, at least 1 */
  public DraftLength(int max) {
    if (max < 1) {
      throw new IllegalArgumentException("a draft of at most " + max + " tokens");
    }
    this.max = max;
    this.next = Math.min(START, max);
  }

  /** Draft tokens to verify in this step by the rules alone; 0 while paused (one call a step). */
  public int next() {
    int gated = pauseOrProbe();
    return gated >= 0 ? gated : next;
  }

  /**
   * Draft tokens to verify in this step; 0 while paused (each call is one step) or when no
   * draft would make the step yield more tokens per second. After a pause the steps probe with
   * one token whatever its price until a draft is verified, so a sequence whose text starts
   * repeating is found again.
   *
   * @param times what steps took, by tokens
   * @param baseRows tokens the step computes without this draft (this sequence's one among them)
   * @param baseTokens tokens the step is expected to yield without this draft
   */
  public int next(StepTimes times, int baseRows, double baseTokens) {
    int gated = pauseOrProbe();
    if (gated >= 0) {
      return gated;
    }
    int k = pricedLength(times, baseRows, baseTokens);
    if (k == 0) {
      pause();
      pausing--; // this step is the pause's first
    }
    return k;
  }

  /**
   * The rules' length priced as {@link #next(StepTimes, int, double)} prices it, but without
   * pauses or probes: for drafts worth verifying only where their price alone says they pay (a
   * short key's one-token guesses into a row that costs nothing, {@link ShortKeyLookup}), so a
   * guess that does not pay is never verified to find out. The acceptance then never falls below
   * what the prior leaves after many misses (1/6), so where an extra row costs nothing such
   * guesses go on; where it costs a third of a step one must be expected to hold above ~43%.
   */
  public int pricedOnly(StepTimes times, int baseRows, double baseTokens) {
    return pricedLength(times, baseRows, baseTokens);
  }

  /** This step's length while paused (0) or probing after a pause (1); -1 otherwise. */
  private int pauseOrProbe() {
    if (pausing > 0) {
      pausing--;
      probe = pausing == 0;
      return 0;
    }
    return probe ? 1 : -1; // a probe lasts until a draft is found and verified
  }

  /**
   * The chance that a draft token is held, given the ones before it were (half a token held and
   * half a draft cut assumed before the first draft).
   */
  double acceptance() {
    return (held + 0.5) / (held + cut + 1);
  }

  /** Draft tokens a draft of {@code length} is expected to have held: p + p^2 + ... + p^length. */
  public double expectedHeld(int length) {
    double p = acceptance();
    double sum = 0;
    double heldAll = 1;
    for (int i = 0; i < length; i++) {
      heldAll *= p;
      sum += heldAll;
    }
    return sum;
  }

  /**
   * The rules' length if its step is expected to yield more tokens per second than a step
   * without it, by {@link #MARGIN}; otherwise the longest shorter length that does, or none. The
   * rules pick long drafts inside a burst of copying, which a single acceptance rate undervalues
   * (measured: the rate-optimal length cost 8% on first-time summaries), so the price only guards
   * against drafts that lose, and a draft cut by it keeps as much of the burst as pays.
   */
  private int pricedLength(StepTimes times, int baseRows, double baseTokens) {
    double bar = (1 + MARGIN) * baseTokens / times.estimate(baseRows);
    for (int k = next; k > 0; k--) {
      if ((baseTokens + expectedHeld(k)) / times.estimate(baseRows + k) > bar) {
        return k;
      }
    }
    return 0;
  }

  private void pause() {
    pause = Math.min(MAX_PAUSE, Math.max(4, pause * 2));
    pausing = pause;
  }

  /** What a verified draft of {@code drafted} tokens gave: its first {@code accepted} held. */
  public void verified(int drafted, int accepted) {
    probe = false;
    held = DECAY * held + accepted;
    cut = DECAY * cut + (accepted < drafted ? 1 : 0);
    if (accepted == 0) {
      next = 1;
      if (++misses >= MISSES_TO_PAUSE) {
        misses = 0;
        pause();
      }
      return;
    }
    misses = 0;
    pause = 0;
    next = Math.min(max, accepted == drafted ? 2 * drafted : accepted + 1);
  }
}
