package dev.radixserve.server.spec;

/**
 * How many draft tokens one sequence verifies next, from how its recent drafts fared and what a
 * step of that many more tokens costs. A sequence
 * starts at {@value #START}: a rejected draft costs its verification, so the first ones are short
 * until drafts prove to pay (a first draft of the maximum made an early miss cost a step of 1 +
 * max tokens). After a fully accepted draft it asks for twice as many (up to the maximum), so a
 * long copy reaches the maximum in a few steps; after a partial one, for one more than were
 * accepted; after {@value #MISSES_TO_PAUSE} drafts in a row with nothing
 * accepted it drafts nothing for a pause that doubles each time it happens again (up to {@value
 * #MAX_PAUSE} steps), then tries a single token. A step that verifies k drafts costs about one
 * decode step while decoding is bound by weight bytes, a little more otherwise: so a sequence
 * whose drafts stop paying decodes as if speculation were off, but for a probe now and then.
 *
 * <p>Those rules bound the length from above; the price bounds it too ({@link #next(StepTimes,
 * int, int)}). Each token of a draft is taken as held with the sequence's recent acceptance
 * rate p, given the ones before it held, so a draft of k yields 1 + p + ... + p^k tokens in
 * expectation; the length chosen is the one whose step yields the most tokens per second at the
 * step times measured ({@link StepTimes}), possibly none, which pauses drafting as misses do. Where
 * a step costs the same whatever its tokens (bound by reading the weights) that is the rules'
 * length; where every token costs compute, drafts stay as short as their odds warrant.
 */
public final class DraftLength {

  /** Tokens of a sequence's first draft. */
  static final int START = 2;
  static final int MISSES_TO_PAUSE = 2;
  static final int MAX_PAUSE = 64;
  /** Weight left to a verification's counts after the next one: the recent drafts count most. */
  static final double DECAY = 0.8;
  /** Step times that price every draft alike: the rules alone set the length. */
  private static final StepTimes UNPRICED = new StepTimes();

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
    return next(UNPRICED, 1, 1);
  }

  /**
   * Draft tokens to verify in this step; 0 while paused (each call is one step) or when no
   * draft would make the step yield more tokens per second. After a pause the steps probe with
   * one token whatever its price until a draft is verified, so a sequence whose text starts
   * repeating is found again.
   *
   * @param times what steps took, by tokens
   * @param baseRows tokens the step computes without this draft (this sequence's one among them)
   * @param baseTokens tokens the step yields without this draft
   */
  public int next(StepTimes times, int baseRows, int baseTokens) {
    if (pausing > 0) {
      pausing--;
      probe = pausing == 0;
      return 0;
    }
    if (probe) {
      return 1; // until a draft is found and verified
    }
    int k = pricedLength(times, baseRows, baseTokens);
    if (k == 0) {
      pause();
      pausing--; // this step is the pause's first
    }
    return k;
  }

  /** The chance that a draft token is held, given the ones before it were (one held, one cut assumed). */
  double acceptance() {
    return (held + 1) / (held + cut + 2);
  }

  /** Up to the rules' length, the draft length whose step yields the most tokens per second. */
  private int pricedLength(StepTimes times, int baseRows, int baseTokens) {
    double p = acceptance();
    double expected = baseTokens;
    double best = expected / times.estimate(baseRows);
    int bestK = 0;
    double heldAll = 1;
    for (int k = 1; k <= next; k++) {
      heldAll *= p;
      expected += heldAll;
      double rate = expected / times.estimate(baseRows + k);
      if (rate > best) {
        best = rate;
        bestK = k;
      }
    }
    return bestK;
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
