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
 *
 * <p>Blocks and tokens (B tokens per block): every node starts on a block boundary and owns its
 * blocks alone (no block is ever held by two nodes). Its last block is partial when its path
 * length is not a multiple of B: then it is a leaf, its last block holds only {@code
 * pathTokens.length % B} tokens, and it stays partial until evicted (a longer sequence gets a
 * sibling node with its own copy of that block, never a child). So {@code blocks[i]} of a node
 * always holds {@code pathTokens[(c - n + i)·B, min((c - n + i + 1)·B, pathTokens.length))},
 * with {@code c = ceil(pathTokens.length / B)} and {@code n = blocks.length}; all but a partial
 * last block are full.
 */
public interface CacheListener {

  /**
   * A new leaf now holds {@code blocks}: the last {@code blocks.length} blocks of {@code
   * pathTokens}, the tokens from the namespace's root to the end of the leaf (the last block is
   * partial when {@code pathTokens.length % B != 0}). A leaf that continues a sibling partial
   * leaf's tokens holds its own copy of them in its first block.
   *
   * @param parentId the leaf's parent (a root's id when it hangs off a namespace root)
   */
  default void stored(String namespace, long nodeId, long parentId, int[] pathTokens,
      int[] blocks) {}

  /**
   * Node {@code nodeId} was split: a new node {@code upperId} took its first {@code upperTokens}
   * tokens (always a multiple of B) and their blocks, and became its parent.
   */
  default void split(String namespace, long nodeId, long upperId, int upperTokens) {}

  /**
   * A leaf left the tree and its blocks went back to the pool.
   *
   * @param pathTokens every token from the root to the end of the evicted leaf
   * @param blocks the leaf's blocks, all freed (the last blocks of the path, the last one partial
   *     when {@code pathTokens.length % B != 0})
   */
  default void evicted(String namespace, long nodeId, int[] pathTokens, int[] blocks) {}

  /**
   * A reset ({@link PrefixCache#evictAll}) left the tree empty; called after the reset's
   * {@link #evicted} calls. Never called for evictions that make room, even when they empty the
   * tree: a subscriber learns of those block by block.
   */
  default void cleared() {}

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
