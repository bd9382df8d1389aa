package dev.radixserve.server.kvtier;

/**
 * One tier's counters, as {@code /metrics} shows them.
 *
 * @param tier "host" or "disk"
 * @param entries blocks held now
 * @param bytes bytes they take
 * @param hits blocks a match found here
 * @param loads blocks loaded from here into the pool
 * @param loadNanos time spent loading them
 * @param stores blocks written here
 * @param evictions entries dropped for room (least recently used first)
 * @param corrupt entries found torn, truncated or failing their checksum: skipped, never loaded
 * @param dropped blocks not stored because the writer was too far behind
 */
public record TierStats(String tier, long entries, long bytes, long hits, long loads,
    long loadNanos, long stores, long evictions, long corrupt, long dropped) {}
