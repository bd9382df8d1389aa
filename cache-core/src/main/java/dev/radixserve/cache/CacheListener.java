package dev.radixserve.cache;

/**
 * Told about every structural change of a {@link RadixCache} as it happens, on the thread that
 * caused it (the engine's): blocks entering the tree, edges splitting, nodes leaving it, and locks
 * taken and released by running requests. Feeds KV cache events and the live view of the tree.
 * Implementations must be cheap (record and return) and must not call back into the cache.
 * Arrays passed in are the listener's to keep.
 *
 * <p>Node ids are unique for the cache's lifetime; a split keeps the lower part under the old id
 * (handles to it keep their meaning) and gives the upper part a new one.
 */
public interface CacheListener {

  /**
   * A new leaf now holds {@code blocks}: the last {@code blocks.length} pages of {@code
   * pathTokens}, the tokens from the namespace's root to the end of the leaf.
   *
   * @param parentId the leaf's parent (a root's id when it hangs off a namespace root)
   */
  default void stored(String namespace, long nodeId, long parentId, int[] pathTokens,
      int[] blocks) {}

  /**
   * Node {@code nodeId} was split: a new node {@code upperId} took its first {@code upperTokens}
   * tokens (and their blocks) and became its parent.
   */
  default void split(String namespace, long nodeId, long upperId, int upperTokens) {}

  /**
   * A leaf left the tree and its blocks went back to the pool.
   *
   * @param pathTokens every token from the root to the end of the evicted leaf
   * @param blocks the leaf's own blocks (the last pages of the path)
   */
  default void evicted(String namespace, long nodeId, int[] pathTokens, int[] blocks) {}

  /**
   * A lock was taken on the path ending at {@code nodeId} (a running request now protects it).
   * Not called for a root handle (an empty match), which protects nothing.
   *
   * @param lockRef the node's lock references after this lock
   */
  default void locked(String namespace, long nodeId, int lockRef) {}

  /**
   * A lock on the path ending at {@code nodeId} was released.
   *
   * @param lockRef the node's lock references after this unlock (0: evictable again if a leaf)
   */
  default void unlocked(String namespace, long nodeId, int lockRef) {}
}
