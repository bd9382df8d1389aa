package dev.radixserve.model;

import java.util.List;

/**
 * One forward step over several sequences: each contributes its new tokens (a prefill chunk, or
 * one decode token), the number of its tokens already in the KV pool, and its block table.
 *
 * <pre>
 *   sequence s: tokens [0, pastLen) already have K/V in the pool (maybe computed by another
 *   sequence that shares the prefix); tokens [pastLen, pastLen + newTokens.length) are computed
 *   now and their K/V written to slot (blockTable[p / B], p % B) for each position p.
 * </pre>
 *
 * @param seqs at least one sequence
 */
public record ForwardBatch(List<Seq> seqs) {

  public ForwardBatch {
    seqs = List.copyOf(seqs);
    if (seqs.isEmpty()) {
      throw new IllegalArgumentException("a forward batch needs at least one sequence");
    }
  }

  /** Total new tokens in the batch (the T of the graph contract). */
  public int totalNewTokens() {
    int t = 0;
    for (Seq s : seqs) {
      t += s.newTokens().length;
    }
    return t;
  }

  /**
   * @param newTokens token ids to compute now, at least one
   * @param pastLen tokens of this sequence whose K/V are already in the pool
   * @param blockTable block ids covering at least {@code pastLen + newTokens.length} positions
   */
  public record Seq(int[] newTokens, int pastLen, int[] blockTable) {
    public Seq {
      if (newTokens.length == 0) {
        throw new IllegalArgumentException("a sequence in a batch needs at least one new token");
      }
      if (pastLen < 0) {
        throw new IllegalArgumentException("pastLen " + pastLen + " < 0");
      }
    }

    public int totalLen() {
      return pastLen + newTokens.length;
    }
  }
}
