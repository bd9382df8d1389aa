package dev.radixserve.server.engine;

import dev.radixserve.cache.BlockPool;

/** {@link BlockSource} over cache-core's {@link BlockPool}. */
public record PoolBlocks(BlockPool pool) implements BlockSource {

  @Override
  public int totalBlocks() {
    return pool.total();
  }

  @Override
  public int freeBlocks() {
    return pool.freeCount();
  }

  @Override
  public int[] allocate(int n, int after) {
    return pool.allocate(n, after);
  }

  @Override
  public void free(int[] blockIds) {
    if (blockIds.length > 0) {
      pool.free(blockIds);
    }
  }
}
