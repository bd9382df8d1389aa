package dev.radixserve.server.kvtier;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Iterator;
import java.util.Map;

/**
 * Offloaded blocks in host memory outside the Java heap: {@code budget / blockBytes} slots of one
 * block each, allocated as first needed and reused, so the tier never takes more than its budget
 * and a large budget costs nothing until blocks are offloaded. Least recently used entries go
 * first (a lookup hit or a load makes an entry recent).
 */
final class HostTier extends LruTier<HostTier.Entry> {

  record Entry(BlockKey key, MemorySegment slot) implements LruTier.Keyed {}

  private final long blockBytes;
  private final int capacity;
  private final Events events;
  private final Arena arena = Arena.ofShared();
  private final Deque<MemorySegment> freeSlots = new ArrayDeque<>();
  private boolean closed;
  private long loads;
  private long loadNanos;
  private long stores;
  private long evictions;

  /** @throws IllegalArgumentException when the budget holds no block */
  HostTier(long budgetBytes, long blockBytes, Events events) {
    long slots = budgetBytes / blockBytes;
    if (slots < 1) {
      throw new IllegalArgumentException("a host tier of " + budgetBytes
          + " bytes holds no block of " + blockBytes + " bytes");
    }
    this.blockBytes = blockBytes;
    this.capacity = (int) Math.min(slots, Integer.MAX_VALUE);
    this.events = events;
  }

  @Override
  public String name() {
    return "host";
  }

  @Override
  public String medium() {
    return "CPU";
  }

  @Override
  public synchronized void put(BlockKey key, MemorySegment kv) {
    if (closed) {
      return;
    }
    Entry old = entries.get(key.hash());
    if (old != null) {
      if (old.key.sameBlock(key)) {
        return;
      }
      freeSlots.push(entries.remove(key.hash()).slot); // a collision: the newer block wins
      events.removed(this, key.hash());
    }
    if (entries.size() == capacity) {
      Iterator<Map.Entry<Long, Entry>> eldest = entries.entrySet().iterator();
      Entry gone = eldest.next().getValue();
      freeSlots.push(gone.slot);
      eldest.remove();
      evictions++;
      events.removed(this, gone.key.hash());
    }
    MemorySegment slot = freeSlots.isEmpty() ? arena.allocate(blockBytes, 64) : freeSlots.pop();
    MemorySegment.copy(kv, 0, slot, 0, blockBytes);
    entries.put(key.hash(), new Entry(key, slot));
    stores++;
    events.stored(this, key);
  }

  @Override
  public synchronized boolean read(BlockKey key, MemorySegment dst) {
    Entry e = closed ? null : entry(key);
    if (e == null) {
      return false;
    }
    long start = System.nanoTime();
    MemorySegment.copy(e.slot, 0, dst, 0, blockBytes);
    loads++;
    loadNanos += System.nanoTime() - start;
    return true;
  }

  @Override
  public synchronized void clear() {
    for (Entry e : entries.values()) {
      freeSlots.push(e.slot);
      events.removed(this, e.key.hash());
    }
    entries.clear();
  }

  @Override
  public synchronized TierStats stats() {
    return new TierStats(name(), entries.size(), entries.size() * blockBytes, hits, loads,
        loadNanos, stores, evictions, 0, 0);
  }

  @Override
  public synchronized void close() {
    if (!closed) {
      closed = true;
      entries.clear();
      freeSlots.clear();
      arena.close();
    }
  }
}
