package dev.radixserve.cache;

import java.util.Arrays;
import java.util.BitSet;

/** The caller's blocks that one insert found already cached under other ids. */
final class InsertDuplicates {

  private final int[] mine;
  private final BitSet owned;
  private final int pageSize;
  private int[] ids = new int[0];
  private int count;

  /**
   * @param mine the caller's block ids, one per page of the insert
   * @param owned ids the tree holds
   */
  InsertDuplicates(int[] mine, BitSet owned, int pageSize) {
    this.mine = mine;
    this.owned = owned;
    this.pageSize = pageSize;
  }

  /**
   * Compares the caller's ids with {@code node}'s blocks, whose first holds token {@code pos}.
   *
   * @throws IllegalStateException when a differing id of the caller's is held by the tree
   */
  void compare(RadixNode node, int pos) {
    int first = pos / pageSize;
    for (int i = 0; i < node.blocks.length; i++) {
      int id = mine[first + i];
      if (id == node.blocks[i]) {
        continue;
      }
      if (owned.get(id)) {
        throw new IllegalStateException("insert hands over block " + id + " at page "
            + (first + i) + ", but the tree already holds it elsewhere");
      }
      if (count == ids.length) {
        ids = Arrays.copyOf(ids, Math.max(4, 2 * count));
      }
      ids[count++] = id;
    }
  }

  int[] ids() {
    return Arrays.copyOf(ids, count);
  }
}
