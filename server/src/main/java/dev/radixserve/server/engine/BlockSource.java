package dev.radixserve.server.engine;

/**
 * The engine's view of the KV block pool (the same pool the prefix cache evicts into).
 * Engine thread only.
 */
public interface BlockSource {

  int totalBlocks();

  int freeBlocks();

  /**
   * Takes {@code n} free blocks for a sequence whose table ends with block {@code after} ({@code
   * -1}: an empty table), as near after it as the pool allows (see {@code BlockPool}).
   *
   * @throws IllegalStateException if fewer than {@code n} are free
   */
  int[] allocate(int n, int after);

  /** Returns blocks to the free list. */
  void free(int[] blockIds);
}
