package dev.radixserve.server.engine;

/**
 * The cache tiers below the KV pool (host memory, local disk) as the engine sees them: where
 * evicted blocks can come back from instead of being recomputed. Implemented by {@code
 * kvtier.KvTiers}, which also listens to the radix cache to offload what it evicts.
 *
 * <p>{@link #find}, {@link #clear} and {@link #offloading} run on the engine thread; {@link
 * TierHits#load} on a loader thread.
 */
public interface BlockTiers {

  /**
   * The run of whole blocks {@code [from, from + k)} of {@code tokens} in {@code namespace} that a
   * tier holds, for the largest such {@code k ≤ to - from} (blocks are keyed by their chained
   * hash, so block {@code i} is only found with the very tokens {@code [0, (i + 1)·B)}).
   */
  TierHits find(String namespace, int[] tokens, int from, int to);

  /**
   * Pool blocks that the cache holds and a request is now served from: its prefix hit at
   * admission, or blocks just loaded from a tier. Lets a selective disk tier keep only reused
   * blocks ({@code kvtier.DiskWritePolicy}). Engine thread; the ids are the caller's.
   */
  default void reused(int[] poolBlocks) {}

  /** Drops every entry of every tier (for {@code /reset_prefix_cache}). */
  void clear();

  /** Turns offloading of evicted blocks on or off (off while a reset empties the cache). */
  void offloading(boolean on);

  /** Blocks found by one {@link BlockTiers#find}: the first {@link #count} after its start. */
  interface TierHits {

    int count();

    /**
     * Loads the {@code i}-th found block into pool block {@code poolBlock}; false when no tier
     * could give it any more (evicted since, or found corrupt: then dropped and counted).
     */
    boolean load(int i, int poolBlock);
  }
}
