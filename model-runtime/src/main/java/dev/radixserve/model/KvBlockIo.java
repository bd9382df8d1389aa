package dev.radixserve.model;

import java.lang.foreign.MemorySegment;

/**
 * Moves one KV block, every layer's keys and values, between a KV pool and a flat buffer: the
 * seam the cache tiers below the pool (host memory, disk) use to offload and load blocks. A
 * device pool implements it with copies to and from host memory.
 *
 * <p>The flat layout is the pool's own rows of the block, layer by layer, keys then values:
 * {@code [nLayer][2][B * rowBytes]}. Its size is {@link #blockBytes()}, the same for every block
 * of the pool; a buffer from one pool fits only a pool of the same model, block size and dtype.
 *
 * <p>Threads: {@link #exportBlock} runs on the engine thread between steps. {@link #importBlock}
 * may run on another thread while a step runs, for a block that no step reads or writes (one that
 * is allocated but not yet in any block table or the cache).
 */
public interface KvBlockIo {

  /** Bytes of one block over all layers, keys and values. */
  long blockBytes();

  /** Copies block {@code block} into {@code dst} (at least {@link #blockBytes()} long). */
  void exportBlock(int block, MemorySegment dst);

  /** Overwrites block {@code block} with {@code src} (at least {@link #blockBytes()} long). */
  void importBlock(int block, MemorySegment src);
}
