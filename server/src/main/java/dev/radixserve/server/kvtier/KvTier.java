package dev.radixserve.server.kvtier;

import java.lang.foreign.MemorySegment;

/**
 * One cache tier below the KV pool: whole blocks' KV (every layer, keys and values, in {@link
 * dev.radixserve.model.KvBlockIo}'s layout) under their {@link BlockKey}, within a byte budget,
 * least recently used entries evicted first. Thread-safe: the engine thread stores and looks up,
 * the loader thread reads.
 */
interface KvTier extends AutoCloseable {

  /** The tier's name in metrics ("host", "disk"). */
  String name();

  /** Where its blocks are, in vLLM's KV event terms. */
  String medium();

  /** True when the tier holds {@code key}'s block; makes it recently used. */
  boolean holds(BlockKey key);

  /** Counts a block a match found here. */
  void hit();

  /** Stores a copy of {@code kv} under {@code key} (no-op when held already). */
  void put(BlockKey key, MemorySegment kv);

  /**
   * Copies {@code key}'s block into {@code dst}; false when the tier no longer holds it or its
   * entry fails its checks (then the entry is dropped and counted as corrupt).
   */
  boolean read(BlockKey key, MemorySegment dst);

  /** Drops every entry. */
  void clear();

  TierStats stats();

  /** Tells {@code to} about every entry held now (a listener that starts late). */
  void replay(java.util.function.Consumer<BlockKey> to);

  /** What a tier tells about its entries coming and going (see {@link TierListener}). */
  interface Events {
    void stored(KvTier tier, BlockKey key);

    void removed(KvTier tier, long hash);
  }

  @Override
  void close();
}
