package dev.radixserve.server.spec;

/**
 * Speculative decoding settings.
 *
 * @param mode where drafts come from ({@code --speculative})
 * @param maxTokens most draft tokens one sequence verifies in one step ({@code
 *     --speculative-max-tokens})
 * @param maxBatch drafting stops while more sequences than this run: a step over a large batch
 *     is no longer bound by reading the weights, so verifying drafts costs real compute
 * @param priced draft lengths weigh what the engine's steps took by their tokens ({@link
 *     DraftLength#next(StepTimes, int, double)}); false (tests) leaves them to the acceptance
 *     alone, so they do not depend on the machine's speed
 */
public record Speculation(SpeculativeMode mode, int maxTokens, int maxBatch, boolean priced) {

  /** Running sequences up to which drafting pays on a CPU or a GPU at small batch. */
  public static final int DEFAULT_MAX_BATCH = 4;

  public Speculation {
    if (maxTokens < 1 || maxTokens > 64) {
      throw new IllegalArgumentException("speculative-max-tokens must be in 1..64, got "
          + maxTokens);
    }
    if (maxBatch < 1) {
      throw new IllegalArgumentException("a speculative batch limit of " + maxBatch);
    }
  }

  /** Priced, as a server runs it. */
  public Speculation(SpeculativeMode mode, int maxTokens, int maxBatch) {
    this(mode, maxTokens, maxBatch, true);
  }

  public static Speculation off() {
    return new Speculation(SpeculativeMode.OFF, 4, DEFAULT_MAX_BATCH);
  }

  public static Speculation ngram(int maxTokens) {
    return new Speculation(SpeculativeMode.NGRAM, maxTokens, DEFAULT_MAX_BATCH);
  }

  /** The setting as a CPU ({@code cuda} false) or CUDA engine runs it: never {@code AUTO}. */
  public Speculation on(boolean cuda) {
    if (mode != SpeculativeMode.AUTO) {
      return this;
    }
    return new Speculation(cuda ? SpeculativeMode.OFF : SpeculativeMode.NGRAM, maxTokens,
        maxBatch, priced);
  }

  /** The same with draft lengths left to the acceptance alone (tests). */
  public Speculation unpriced() {
    return new Speculation(mode, maxTokens, maxBatch, false);
  }

  /** Whether sequences draft; an unresolved {@code AUTO} ({@link #on} not applied) does not. */
  public boolean enabled() {
    return mode == SpeculativeMode.NGRAM;
  }
}
