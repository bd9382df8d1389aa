package dev.radixserve.cache;

import java.util.Arrays;

/**
 * The longest cached prefix of a query, to the token.
 *
 * <pre>
 *   B = 4, matchedTokens = 10, partialTokens = 2:
 *     blockIds = [ b0 | b1 | b2 ]      b0: tokens 0-3, b1: 4-7 (whole: use them as they are)
 *                               b2: slots 0-1 hold tokens 8, 9; slots 2-3 hold other tokens or
 *                                   nothing the query may use: copy slots [0, 2) into a block of
 *                                   your own, compute from token 10 on, and never write b2
 * </pre>
 *
 * @param matchedTokens tokens found (any count, at most the length asked for)
 * @param blockIds {@code ceil(matchedTokens / B)} ids; when {@code partialTokens > 0} the last one
 *     is a copy-on-write source whose first {@code partialTokens} slots belong to the match
 * @param partialTokens {@code matchedTokens % B}: tokens of the match inside its last block
 * @param node locking it protects every block in {@code blockIds}, the copy source included (the
 *     root when nothing matched)
 * @param fullBlocksNode locking it protects the whole blocks only, {@code blockIds} without the
 *     copy source; the same as {@code node} when the match ends on a block boundary
 */
public record MatchResult(int matchedTokens, int[] blockIds, int partialTokens, NodeHandle node,
    NodeHandle fullBlocksNode) {

  /** A match that ends on a block boundary. */
  public MatchResult(int matchedTokens, int[] blockIds, NodeHandle node) {
    this(matchedTokens, blockIds, 0, node, node);
  }

  /** Whether the match ends inside its last block (a copy-on-write source). */
  public boolean endsInsideBlock() {
    return partialTokens > 0;
  }

  /** Ids of the whole blocks. */
  public int[] fullBlockIds() {
    return endsInsideBlock() ? Arrays.copyOf(blockIds, blockIds.length - 1) : blockIds;
  }

  /**
   * The cached block whose first {@link #partialTokens()} slots end the match.
   *
   * @throws IllegalStateException when the match ends on a block boundary
   */
  public int copySource() {
    if (!endsInsideBlock()) {
      throw new IllegalStateException("a match of " + matchedTokens + " tokens ends on a block"
          + " boundary: no copy source");
    }
    return blockIds[blockIds.length - 1];
  }
}
