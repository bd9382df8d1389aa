package dev.radixserve.cache;

/** Test hook: told about each node eviction removes, before its blocks go back to the pool. */
@FunctionalInterface
interface EvictionListener {

  /**
   * @param namespace the node's namespace
   * @param pathTokens every token from the root to the end of the evicted node
   * @param blocks the evicted node's blocks (its own pages only, the last ones of the path)
   */
  void evicted(String namespace, int[] pathTokens, int[] blocks);
}
