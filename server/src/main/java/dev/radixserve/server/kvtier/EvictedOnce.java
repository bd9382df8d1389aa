package dev.radixserve.server.kvtier;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The hashes of recently evicted blocks that {@link DiskWritePolicy#REUSED} kept off the disk, the
 * least recently added dropped past a bound (TinyLFU's "doorkeeper"). A block whose hash is here
 * when it is evicted again was computed again in between: its prompt came back, so it is worth a
 * disk write, even if it never stayed in the pool long enough to be reused from there (a
 * disk-only server whose prompts always return after their eviction would otherwise never write
 * them). Engine thread only.
 */
final class EvictedOnce {

  private final Map<Long, Boolean> hashes;

  /** @param capacity how many hashes are remembered (~100 bytes of heap each) */
  EvictedOnce(int capacity) {
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be positive: " + capacity);
    }
    this.hashes = new LinkedHashMap<>(16, 0.75f, false) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<Long, Boolean> eldest) {
        return size() > capacity;
      }
    };
  }

  /**
   * True when {@code hash} was remembered (and forgets it: it is written now); otherwise
   * remembers it and answers false.
   */
  boolean seenBefore(long hash) {
    if (hashes.remove(hash) != null) {
      return true;
    }
    hashes.put(hash, Boolean.TRUE);
    return false;
  }

  int size() {
    return hashes.size();
  }
}
