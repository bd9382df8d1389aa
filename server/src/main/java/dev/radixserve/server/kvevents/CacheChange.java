package dev.radixserve.server.kvevents;

/**
 * What the engine thread hands the publisher: cheap records holding the arrays the cache gave
 * its listener (no copy, no hashing). Blocks {@code [fromBlock, toBlock)} are whole blocks of
 * {@code path}, which runs from the namespace's root; hashing them needs the path's earlier
 * blocks too, so the publisher thread does it.
 */
sealed interface CacheChange {

  /** Blocks that entered the cache. */
  record Stored(String namespace, int[] path, int fromBlock, int toBlock) implements CacheChange {}

  /** Blocks that left the cache. */
  record Removed(String namespace, int[] path, int fromBlock, int toBlock) implements CacheChange {}

  /**
   * A block a tier below the pool now holds, already hashed.
   *
   * @param parentHash null for block 0
   * @param salt block 0's cache salt when known; else null
   */
  record TierStored(String medium, long hash, Long parentHash, int[] tokens, String salt)
      implements CacheChange {}

  /** A block a tier no longer holds. */
  record TierRemoved(String medium, long hash) implements CacheChange {}

  /** A reset emptied the cache (after the reset's {@link Removed} records). */
  record Cleared() implements CacheChange {}
}
