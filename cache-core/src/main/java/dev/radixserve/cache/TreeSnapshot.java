package dev.radixserve.cache;

import java.util.List;

/**
 * A read-only copy of the tree, taken on the cache's thread and safe to read on any other: plain
 * values and fresh arrays only. One root per namespace (by namespace), children by node id.
 *
 * <p>Tokens and blocks are reported separately per node: a consumer must not assume an edge is a
 * whole number of blocks.
 *
 * @param clock the cache's access clock when taken (compare with {@link Node#lastAccess()})
 * @param roots one entry per namespace present
 */
public record TreeSnapshot(long clock, List<Root> roots) {

  /**
   * @param id the root's node id: the parent id of its children in {@link CacheListener} calls
   */
  public record Root(String namespace, long id, List<Node> children) {}

  /**
   * @param id node id, unique for the cache's lifetime (a split keeps the lower part's id)
   * @param tokenIds the tokens on the edge into this node (a copy); not a multiple of the block
   *     size only for a leaf whose last block is partial (see {@link CacheListener})
   * @param blocks blocks this node holds ({@code ceil(tokens / B)}; no block is in two nodes)
   * @param lockRef current lock references
   * @param hits times a match passed through this node
   * @param lastAccess access clock value at the last touch (monotonic, not wall time)
   * @param evictable an unlocked leaf: eviction may take it now
   * @param children child nodes
   */
  public record Node(long id, int[] tokenIds, int blocks, int lockRef, long hits,
      long lastAccess, boolean evictable, List<Node> children) {

    /** Tokens on the edge into this node. */
    public int tokens() {
      return tokenIds.length;
    }
  }
}
