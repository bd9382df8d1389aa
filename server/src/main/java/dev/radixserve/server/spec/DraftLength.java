package dev.radixserve.server.spec;

/**
 * How many draft tokens one sequence verifies next, from how its recent drafts fared. A sequence
 * starts at {@value #START}: a rejected draft costs its verification, so the first ones are short
 * until drafts prove to pay (a first draft of the maximum made an early miss cost a step of 1 +
 * max tokens). After a fully accepted draft it asks for twice as many (up to the maximum), so a
 * long copy reaches the maximum in a few steps; after a partial one, for one more than were
 * accepted; after {@value #MISSES_TO_PAUSE} drafts in a row with nothing
 * accepted it drafts nothing for a pause that doubles each time it happens again (up to {@value
 * #MAX_PAUSE} steps), then tries a single token. A step that verifies k drafts costs about one
 * decode step while decoding is bound by weight bytes, a little more otherwise: so a sequence
 * whose drafts stop paying decodes as if speculation were off, but for a probe now and then.
 */
public final class DraftLength {

  /** Tokens of a sequence's first draft. */
  static final int START = 2;
  static final int MISSES_TO_PAUSE = 2;
  static final int MAX_PAUSE = 64;

  private final int max;
  private int next;
  private int misses;
  private int pause;
  private int pausing;

  /** @param max most tokens one draft may hold, at least 1 */
  public DraftLength(int max) {
    if (max < 1) {
      throw new IllegalArgumentException("a draft of at most " + max + " tokens");
    }
    this.max = max;
    this.next = Math.min(START, max);
  }

  /** Draft tokens to verify in this step; 0 while paused (each call is one step). */
  public int next() {
    if (pausing > 0) {
      pausing--;
      return 0;
    }
    return next;
  }

  /** What a verified draft of {@code drafted} tokens gave: its first {@code accepted} held. */
  public void verified(int drafted, int accepted) {
    if (accepted == 0) {
      next = 1;
      if (++misses >= MISSES_TO_PAUSE) {
        misses = 0;
        pause = Math.min(MAX_PAUSE, Math.max(4, pause * 2));
        pausing = pause;
      }
      return;
    }
    misses = 0;
    pause = 0;
    next = Math.min(max, accepted == drafted ? 2 * drafted : accepted + 1);
  }
}
