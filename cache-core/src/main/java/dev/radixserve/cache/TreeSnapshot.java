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
   * @param tokens tokens on the edge into this node
   * @param blocks blocks this node holds
   * @param lockRef current lock references
   * @param hits times a match passed through this node
   * @param lastAccess access clock value at the last touch (monotonic, not wall time)
   * @param children child nodes
   */
  public record Node(int tokens, int blocks, int lockRef, long hits, long lastAccess,
      List<Node> children) {}
}
