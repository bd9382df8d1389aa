package dev.radixserve.server.engine;

/**
 * A consistency snapshot of the engine's memory (test hook and debugging aid).
 *
 * @param totalBlocks blocks in the pool
 * @param freeBlocks on the free list
 * @param cachedBlocks held by the prefix cache
 * @param evictableBlocks of those, unlocked
 * @param inUseBlocks held by sequences outside the cache
 * @param running sequences admitted
 * @param waiting sequences waiting (preempted ones included)
 * @param integrityError null when {@code free + cached + inUse == total} and the cache's own
 *     integrity check passes; otherwise what broke
 */
public record EngineSnapshot(int totalBlocks, int freeBlocks, int cachedBlocks,
    int evictableBlocks, int inUseBlocks, int running, int waiting, String integrityError) {

  /** No request holds anything: every block is free or cached and unlocked. */
  public boolean quiescent() {
    return running == 0 && waiting == 0 && inUseBlocks == 0 && cachedBlocks == evictableBlocks
        && freeBlocks + cachedBlocks == totalBlocks;
  }
}
