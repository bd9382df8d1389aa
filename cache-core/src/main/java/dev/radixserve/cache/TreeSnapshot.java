package dev.radixserve.cache;

import java.util.List;

/**
 * A read-only copy of the tree: one root per namespace.
 *
 * @param roots one entry per namespace present
 */
public record TreeSnapshot(List<Root> roots) {

  public record Root(String namespace, List<Node> children) {}

  /**
   * @param tokens tokens on the edge into this node; not a multiple of the block size only for
   *     a leaf whose last block is partial (see {@link CacheListener})
   * @param blocks blocks this node holds ({@code ceil(tokens / B)}; no block is in two nodes)
   * @param lockRef current lock references
   * @param hits times a match passed through this node
   * @param lastAccess access clock value at the last touch (monotonic, not wall time)
   * @param children child nodes
   */
  public record Node(int tokens, int blocks, int lockRef, long hits, long lastAccess,
      List<Node> children) {}
}
