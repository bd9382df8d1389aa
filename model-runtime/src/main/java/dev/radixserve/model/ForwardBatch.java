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
 * <p>Before anything is computed, the step performs its {@link BlockCopy copies} (copy-on-write
 * of a partly matched cached block into a sequence's own block), in list order.
 *
 * <p>Logits come back as rows in batch order: one row per sequence (its last new token), or one
 * row per new token for a sequence with {@link Seq#allLogits()} (prompt logprobs). {@link
 * #lastRow(int)} finds a sequence's last row.
 *
 * @param seqs at least one sequence
 * @param copies block copies done before the step computes; may be empty
 */
public record ForwardBatch(List<Seq> seqs, List<BlockCopy> copies) {

  public ForwardBatch {
    seqs = List.copyOf(seqs);
    copies = List.copyOf(copies);
    if (seqs.isEmpty()) {
      throw new IllegalArgumentException("a forward batch needs at least one sequence");
    }
  }

  /** A step without block copies. */
  public ForwardBatch(List<Seq> seqs) {
    this(seqs, List.of());
  }

  /** Total new tokens in the batch (the T of the graph contract). */
  public int totalNewTokens() {
    int t = 0;
    for (Seq s : seqs) {
      t += s.newTokens().length;
    }
    return t;
  }

  /** Logit rows the step returns (the R of the graph contract): seqs, plus all-logits tokens. */
  public int logitRows() {
    int r = 0;
    for (Seq s : seqs) {
      r += s.logitRows();
    }
    return r;
  }

  /** Index of sequence {@code i}'s first logit row. */
  public int firstRow(int i) {
    int r = 0;
    for (int k = 0; k < i; k++) {
      r += seqs.get(k).logitRows();
    }
    return r;
  }

  /** Index of sequence {@code i}'s last logit row (its last new token). */
  public int lastRow(int i) {
    return firstRow(i) + seqs.get(i).logitRows() - 1;
  }

  /** True when every sequence returns a single row (rows are indexed like {@link #seqs()}). */
  public boolean lastRowsOnly() {
    for (Seq s : seqs) {
      if (s.allLogits()) {
        return false;
      }
    }
    return true;
  }

  /**
   * @param newTokens token ids to compute now, at least one
   * @param pastLen tokens of this sequence whose K/V are already in the pool
   * @param blockTable block ids covering at least {@code pastLen + newTokens.length} positions
   * @param allLogits return logits at every new token (prompt logprobs), not only the last
   * @param longContext the sequence runs in the model's long context ({@link
   *     ModelShape#longContextFrom}): the graph sees its positions offset by the model's
   *     {@code nPositions}, the rows of the long-context rotary tables
   */
  public record Seq(int[] newTokens, int pastLen, int[] blockTable, boolean allLogits,
      boolean longContext) {
    public Seq {
      if (newTokens.length == 0) {
        throw new IllegalArgumentException("a sequence in a batch needs at least one new token");
      }
      if (pastLen < 0) {
        throw new IllegalArgumentException("pastLen " + pastLen + " < 0");
      }
    }

    /** In the model's usual (short) context. */
    public Seq(int[] newTokens, int pastLen, int[] blockTable, boolean allLogits) {
      this(newTokens, pastLen, blockTable, allLogits, false);
    }

    /** Logits at the last new token only. */
    public Seq(int[] newTokens, int pastLen, int[] blockTable) {
      this(newTokens, pastLen, blockTable, false);
    }

    public int totalLen() {
      return pastLen + newTokens.length;
    }

    /** Logit rows this sequence gets back. */
    public int logitRows() {
      return allLogits ? newTokens.length : 1;
    }
  }

  /**
   * Copy-on-write of a partly matched block: slots {@code [0, slots)} of block {@code srcBlock}
   * are copied into block {@code dstBlock}, keys and values of every layer. {@code srcBlock} is
   * only read.
   *
   * @param slots between 1 and the block size
   */
  public record BlockCopy(int srcBlock, int dstBlock, int slots) {
    public BlockCopy {
      if (srcBlock == dstBlock) {
        throw new IllegalArgumentException("a block copy onto itself (block " + srcBlock + ")");
      }
      if (slots < 1) {
        throw new IllegalArgumentException("a block copy of " + slots + " slots");
      }
    }
  }
}
