package dev.radixserve.server.spec;

/** {@code --speculative}: where draft tokens come from, if anywhere. */
public enum SpeculativeMode {
  /**
   * The default: {@link #NGRAM} on the CPU, where it measured no worse than off on every
   * workload tried, {@link #OFF} on CUDA, where a verification step has not run on a GPU yet
   * ({@link Speculation#on}).
   */
  AUTO,
  /** No speculation: one token per sequence and step. */
  OFF,
  /**
   * N-gram drafts: the sequence's own prompt and output (prompt lookup), then the token runs the
   * prefix cache holds in the request's namespace ({@link RadixDraftIndex}).
   */
  NGRAM
}
