package dev.radixserve.server.cacheview;

import dev.radixserve.cache.CacheStats;
import dev.radixserve.cache.TreeSnapshot;

/**
 * A snapshot of the cache taken on the engine thread, with what the view needs to order it.
 *
 * @param version increases by one per distinct snapshot
 * @param eventSeq the last event recorded before it was taken (the tree includes its effect)
 * @param takenMillis wall-clock time
 * @param copyNanos what taking it cost the engine thread
 */
record CacheSample(long version, long eventSeq, long takenMillis, int blockSize,
    TreeSnapshot tree, CacheStats stats, long copyNanos) {}
