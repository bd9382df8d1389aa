package dev.radixserve.server.spec;

/**
 * Speculative decoding settings.
 *
 * @param mode where drafts come from ({@code --speculative})
 * @param maxTokens most draft tokens one sequence verifies in one step ({@code
 *     --speculative-max-tokens})
 * @param maxBatch drafting stops while more sequences than this run: a step over a large batch
 *     is no longer bound by reading the weights, so verifying drafts costs real compute
 */
public record Speculation(SpeculativeMode mode, int maxTokens, int maxBatch) {

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
        maxBatch);
  }

  /** Whether sequences draft; an unresolved {@code AUTO} ({@link #on} not applied) does not. */
  public boolean enabled() {
    return mode == SpeculativeMode.NGRAM;
  }
}
