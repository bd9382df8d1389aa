package dev.radixserve.server.cacheview;

import dev.radixserve.cache.CacheStats;
import dev.radixserve.cache.TreeSnapshot;
import dev.radixserve.server.kvtier.KvTiers;
import java.util.List;

/**
 * A snapshot of the cache taken on the engine thread, with what the view needs to order it.
 *
 * @param version increases by one per distinct snapshot
 * @param eventSeq the last event recorded before it was taken (the tree includes its effect)
 * @param takenMillis wall-clock time
 * @param copyNanos what taking it cost the engine thread
 * @param offloaded the blocks the cache tiers below the pool held then (empty without tiers)
 * @param tiers the tiers' hasher's owner, to place those blocks; null without tiers
 */
record CacheSample(long version, long eventSeq, long takenMillis, int blockSize,
    TreeSnapshot tree, CacheStats stats, long copyNanos, List<KvTiers.IndexedBlock> offloaded,
    KvTiers tiers) {

  /** A sample without tiers. */
  CacheSample(long version, long eventSeq, long takenMillis, int blockSize, TreeSnapshot tree,
      CacheStats stats, long copyNanos) {
    this(version, eventSeq, takenMillis, blockSize, tree, stats, copyNanos, List.of(), null);
  }
}
