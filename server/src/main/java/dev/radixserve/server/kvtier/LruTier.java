package dev.radixserve.server.kvtier;

import java.util.LinkedHashMap;
import java.util.function.Consumer;

/**
 * What both tiers share: entries by block hash in recency order (a lookup or a load makes an
 * entry recent; the eldest goes first), the hit count, and the checks that an entry holds the
 * very block asked for. Guarded by the tier's monitor.
 */
abstract class LruTier<E extends LruTier.Keyed> implements KvTier {

  /** An entry knows its block. */
  interface Keyed {
    BlockKey key();
  }

  protected final LinkedHashMap<Long, E> entries = new LinkedHashMap<>(64, 0.75f, true);
  protected long hits;

  /** The entry holding {@code key}'s block, made recent; null when none. Monitor held. */
  protected final E entry(BlockKey key) {
    E e = entries.get(key.hash());
    return e != null && e.key().sameBlock(key) ? e : null;
  }

  @Override
  public synchronized boolean holds(BlockKey key) {
    return entry(key) != null;
  }

  @Override
  public synchronized void hit() {
    hits++;
  }

  @Override
  public synchronized void replay(Consumer<BlockKey> to) {
    entries.values().forEach(e -> to.accept(e.key()));
  }
}
