package dev.radixserve.cache;

import java.util.Arrays;

/**
 * Where a match or insert ends inside a block: which child's first block continues the query.
 * Children start on a block boundary, so at most a page of the query is compared with each.
 *
 * <p>Order among children: most matching tokens, then a whole first page before a partial leaf
 * (so a partial leaf that a longer sibling made redundant is no longer touched and ages out),
 * then the smaller key. It depends on tokens only, so a model of the cache can predict it.
 */
final class FirstBlocks {

  private final int pageSize;

  FirstBlocks(int pageSize) {
    this.pageSize = pageSize;
  }

  /** Leading tokens of {@code child}'s edge equal to {@code tokens[pos, limit)}. */
  static int common(RadixNode child, int[] tokens, int pos, int limit) {
    int span = Math.min(child.tokens.length, limit - pos);
    int mismatch = Arrays.mismatch(child.tokens, 0, span, tokens, pos, pos + span);
    return mismatch < 0 ? span : mismatch;
  }

  /**
   * The child of {@code node} whose first block best continues {@code tokens[from, to)} (at most
   * a page); null when no child matches a token.
   */
  RadixNode best(RadixNode node, int[] tokens, int from, int to) {
    RadixNode best = null;
    int bestCommon = 0;
    for (RadixNode c : node.startingWith(tokens[from])) {
      int k = common(c, tokens, from, to);
      if (k > bestCommon || (k == bestCommon && k > 0 && ranksBefore(c, best))) {
        best = c;
        bestCommon = k;
      }
    }
    return best;
  }

  /**
   * The child of {@code node} whose first block covers all of {@code tokens[from, to)} (less
   * than a page): the one holding {@code mine} if any (the caller's block is then the tree's
   * own, not a duplicate), else the first in this class's order; null when none.
   */
  RadixNode covering(RadixNode node, int[] tokens, int from, int to, int mine) {
    RadixNode best = null;
    for (RadixNode c : node.startingWith(tokens[from])) {
      if (common(c, tokens, from, to) == to - from) {
        if (c.blocks[0] == mine) {
          return c;
        }
        if (best == null || ranksBefore(c, best)) {
          best = c;
        }
      }
    }
    return best;
  }

  private boolean ranksBefore(RadixNode a, RadixNode b) {
    boolean aWhole = a.tokens.length >= pageSize;
    boolean bWhole = b.tokens.length >= pageSize;
    if (aWhole != bWhole) {
      return aWhole;
    }
    return Arrays.compare(a.tokens, 0, Math.min(pageSize, a.tokens.length),
        b.tokens, 0, Math.min(pageSize, b.tokens.length)) < 0;
  }
}
