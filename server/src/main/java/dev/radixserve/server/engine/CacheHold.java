package dev.radixserve.server.engine;

import dev.radixserve.cache.NodeHandle;
import dev.radixserve.cache.PrefixCache;

/** A lock on a radix-cache node: the path's blocks cannot be evicted while held. */
final class CacheHold implements PrefixHold {

  private final PrefixCache cache;
  private final NodeHandle node;
  private boolean released;

  /** Locks {@code node}. */
  CacheHold(PrefixCache cache, NodeHandle node) {
    this.cache = cache;
    this.node = node;
    cache.lock(node);
  }

  @Override
  public PrefixHold share() {
    return new CacheHold(cache, node);
  }

  @Override
  public void release() {
    if (released) {
      throw new IllegalStateException("cache lock released twice");
    }
    released = true;
    cache.unlock(node);
  }

  @Override
  public int[] privateBlocks() {
    return new int[0];
  }
}
