package dev.radixserve.server.engine;

/**
 * The engine's view of the KV block pool (the same pool the prefix cache evicts into).
 * Engine thread only.
 */
public interface BlockSource {

  int totalBlocks();

  int freeBlocks();

  /**
   * Takes {@code n} free blocks.
   *
   * @throws IllegalStateException if fewer than {@code n} are free
   */
  int[] allocate(int n);

  /** Returns blocks to the free list. */
  void free(int[] blockIds);
}
