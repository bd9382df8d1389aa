package dev.radixserve.model;

import java.util.Optional;

/**
 * Runs the model over a paged KV pool. The scheduler sees only this seam: token ids, positions
 * (implied by {@code pastLen}) and block tables in, one row of logits per sequence out.
 *
 * <p>Not thread-safe: the engine thread alone calls it.
 */
public interface ModelRunner extends AutoCloseable {

  ModelShape config();

  /** Tokens per KV block (B). */
  int blockSize();

  /** Blocks in the KV pool; valid block ids are {@code [0, numBlocks)}. */
  int numBlocks();

  /**
   * Performs the batch's block copies, computes the new tokens of every sequence, writes their
   * keys and values into the pool, and returns the logits at each sequence's last new token (at
   * every new token for a sequence that asks for all).
   *
   * @return {@code [batch.logitRows()][vocabSize]} logits, in batch order (see {@link
   *     ForwardBatch#lastRow})
   */
  float[][] forward(ForwardBatch batch);

  /**
   * {@link #forward}, whose rows may be arrays this runner hands out again at its next call of
   * this method: they are valid until then, and a caller copies what it keeps. For the engine,
   * which consumes a step's logits before it runs the next: a fresh vocabulary row per token
   * was most of what a decode step allocated (1B: 513 KB of ~940 KB per token), and what grew
   * the heap under load (docs/benchmarks/journal/2026-11-28c-decode-heap.md).
   */
  default float[][] forwardReusingRows(ForwardBatch batch) {
    return forward(batch);
  }

  /**
   * Asks that the rows the steps read by token id for {@code ids[from, to)} (the token
   * embedding's) be read ahead where this runner reads them from a file ({@link RowPrefetch}): a
   * hint, for a token as soon as it is known, so that its step does not wait on the disk. Does
   * nothing by default.
   */
  default void prefetchRows(int[] ids, int from, int to) {}

  /**
   * Block export and import for the cache tiers below the pool; empty when this runner's pool
   * cannot move blocks (the tiers are then off).
   */
  default Optional<KvBlockIo> blockIo() {
    return Optional.empty();
  }

  @Override
  void close();
}
