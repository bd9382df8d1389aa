package dev.radixserve.server.kvtier;

/**
 * Which evicted blocks the disk tier takes (the host tier takes every one). SGLang HiCache's
 * {@code write_through} vs {@code write_through_selective}: writing a file per evicted block costs
 * the writer thread's file-system work on every eviction, which only pays when the block is asked
 * for again; at 0 % reuse none is.
 */
public enum DiskWritePolicy {
  /** Every evicted whole block, as the host tier. */
  ALL,
  /**
   * An evicted block only if it served a later request from the pool (a prefix hit at
   * admission), came back from a tier since it last entered the pool, or was evicted before
   * and kept off the disk then (its prompt came back and was computed again: {@link
   * EvictedOnce}).
   */
  REUSED
}
