package dev.radixserve.server.engine;

/**
 * A sequence's claim on the leading blocks of its block table that it does not own alone: a lock
 * on a radix-cache node (cache on) or a share of a forked prompt's blocks (cache off).
 * Released exactly once.
 */
interface PrefixHold {

  /** A second, independent claim on the same blocks (for a forked choice). */
  PrefixHold share();

  void release();

  /** Blocks kept in use (not free, not cached) only by holds like this one; 0 for cache locks. */
  int[] privateBlocks();
}
