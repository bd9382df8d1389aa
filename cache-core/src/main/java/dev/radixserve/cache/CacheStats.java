package dev.radixserve.cache;

/**
 * Monotonic counters since the cache was created, plus current sizes.
 *
 * @param queries matchPrefix calls
 * @param queryTokens tokens asked for across all matchPrefix calls
 * @param hitTokens tokens matched across all matchPrefix calls
 * @param insertedBlocks blocks the tree took ownership of through insert
 * @param evictedBlocks blocks returned to the pool by eviction
 * @param cachedBlocks blocks in the tree now
 * @param evictableBlocks of those, unlocked
 * @param nodes nodes in the tree now, roots excluded
 */
public record CacheStats(
    long queries,
    long queryTokens,
    long hitTokens,
    long insertedBlocks,
    long evictedBlocks,
    int cachedBlocks,
    int evictableBlocks,
    int nodes) {}
