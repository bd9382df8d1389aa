package dev.radixserve.server.cacheview;

import dev.radixserve.cache.CacheListener;
import dev.radixserve.cache.PrefixCache;
import dev.radixserve.cache.TreeSnapshot;
import dev.radixserve.server.engine.EngineObserver;
import dev.radixserve.server.kvtier.KvTiers;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The engine-thread side of the cache view: hears the radix cache ({@link CacheListener}) and the
 * engine's admissions ({@link EngineObserver}), and takes snapshots when the view asks.
 *
 * <p>Never slows the engine: each callback is a few field writes and, only while someone watches,
 * one queue offer; the queue is bounded ({@value #CAPACITY}) and an event that does not fit is
 * dropped and counted. Admission matches are queued even when nobody watches, so a request can be
 * looked up by id when the page opens later.
 */
public final class CacheRecorder implements CacheListener, EngineObserver {

  static final int CAPACITY = 8192;

  private final ConcurrentLinkedQueue<CacheEvent> queue = new ConcurrentLinkedQueue<>();
  private final AtomicInteger queued = new AtomicInteger();
  private final AtomicLong dropped = new AtomicLong();
  private volatile boolean watching;

  // engine thread only
  private long seq;
  private long changes;
  private long sampledChanges = -1;
  private long sampledQueries = -1;
  private long version;
  private CacheSample last;
  private long sampledTierChanges = -1;
  /** The cache tiers below the pool, shown as offloaded nodes; null without tiers. */
  private volatile KvTiers tiers;

  /** Shows the blocks {@code tiers} hold in every sample from now on (before the view starts). */
  public void showTiers(KvTiers tiers) {
    this.tiers = tiers;
  }

  /** Whether structural events are queued (someone watches the stream). */
  void watching(boolean on) {
    watching = on;
  }

  /** Events dropped because the queue was full. */
  long dropped() {
    return dropped.get();
  }

  /** Moves every queued event into {@code out} (the view's thread). */
  void drainTo(List<CacheEvent> out) {
    for (CacheEvent e = queue.poll(); e != null; e = queue.poll()) {
      queued.decrementAndGet();
      out.add(e);
    }
  }

  /**
   * Engine thread: the cache's state now, or the previous sample when nothing changed since (no
   * structural event, lock or lookup), so an idle cache costs no copy.
   */
  CacheSample sample(PrefixCache cache) {
    long queries = cache.stats().queries();
    KvTiers t = tiers;
    long tierChanges = t == null ? 0 : t.changes();
    if (last == null || changes != sampledChanges || queries != sampledQueries
        || tierChanges != sampledTierChanges) {
      sampledChanges = changes;
      sampledQueries = queries;
      sampledTierChanges = tierChanges;
      long t0 = System.nanoTime();
      TreeSnapshot tree = cache.snapshot();
      // the tiers' index with the tree: both as of this point between two steps (a disk write
      // finishing on its thread meanwhile shows in the next sample)
      List<KvTiers.IndexedBlock> offloaded = t == null ? List.of() : t.index();
      last = new CacheSample(++version, seq, System.currentTimeMillis(), cache.blockSize(),
          tree, cache.stats(), System.nanoTime() - t0, offloaded, t);
    }
    return last;
  }

  @Override
  public void stored(String namespace, long nodeId, long parentId, int[] pathTokens,
      int[] blocks) {
    changes++;
    if (watching) {
      offer(new CacheEvent.Stored(++seq, System.currentTimeMillis(), namespace, nodeId, parentId,
          pathTokens, blocks.length));
    }
  }

  @Override
  public void split(String namespace, long nodeId, long upperId, int upperTokens) {
    changes++;
    if (watching) {
      offer(new CacheEvent.Split(++seq, System.currentTimeMillis(), namespace, nodeId, upperId,
          upperTokens));
    }
  }

  @Override
  public void evicted(String namespace, long nodeId, int[] pathTokens, int[] blocks) {
    changes++;
    if (watching) {
      offer(new CacheEvent.Evicted(++seq, System.currentTimeMillis(), namespace, nodeId,
          pathTokens, blocks.length));
    }
  }

  @Override
  public void locked(String namespace, long nodeId, int lockRef) {
    changes++;
    if (watching) {
      offer(new CacheEvent.Locked(++seq, System.currentTimeMillis(), namespace, nodeId, lockRef));
    }
  }

  @Override
  public void unlocked(String namespace, long nodeId, int lockRef) {
    changes++;
    if (watching) {
      offer(new CacheEvent.Unlocked(++seq, System.currentTimeMillis(), namespace, nodeId,
          lockRef));
    }
  }

  @Override
  public void prefixMatched(String requestId, int choice, String namespace, long nodeId,
      int matchedTokens, int queriedTokens) {
    offer(new CacheEvent.Matched(++seq, System.currentTimeMillis(), requestId, choice, namespace,
        nodeId, matchedTokens, queriedTokens));
  }

  private void offer(CacheEvent e) {
    if (queued.incrementAndGet() > CAPACITY) {
      queued.decrementAndGet();
      dropped.incrementAndGet();
      return;
    }
    queue.offer(e);
  }
}
