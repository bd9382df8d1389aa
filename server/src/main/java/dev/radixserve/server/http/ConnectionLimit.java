package dev.radixserve.server.http;

import io.netty.channel.Channel;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * Keeps at most {@code max} connections open, deciding when a connection is accepted, before
 * anything is read from it. Over the limit, the connection idle the longest (no request in
 * progress, or only part of a request head) is closed to make room, as nginx reuses keep-alive
 * connections when it runs short; when every connection is busy with a request, the new one is
 * closed at once. So idle sockets can never exhaust the descriptors, and a new client is served
 * whenever some connection is merely idle.
 *
 * <p>Shared by every event loop: the count and the per-connection states are concurrent. Finding
 * the oldest idle connection scans the open ones, which only happens over the limit.
 */
public final class ConnectionLimit {

  private final int max;
  private final AtomicInteger count = new AtomicInteger();
  private final Map<Channel, State> open = new ConcurrentHashMap<>();
  private final LongAdder refused = new LongAdder();
  private final LongAdder evicted = new LongAdder();

  public ConnectionLimit(int max) {
    this.max = max;
  }

  /** Whether one connection has a request in progress; updated by its {@link ReadTimeouts}. */
  static final class State {
    private volatile boolean idle = true;
    private volatile long idleSince = System.nanoTime();
    private final AtomicBoolean evicting = new AtomicBoolean();

    void idle(boolean now) {
      if (now && !idle) {
        idleSince = System.nanoTime();
      }
      idle = now;
    }
  }

  /**
   * Called as a connection is set up (its event loop).
   *
   * @return its state to keep current, or null when it must be closed now (every connection is
   *     busy)
   */
  State accept(Channel ch) {
    if (count.incrementAndGet() > max && !evictOldestIdle()) {
      count.decrementAndGet();
      refused.increment();
      return null;
    }
    State state = new State();
    open.put(ch, state);
    ch.closeFuture().addListener(f -> {
      open.remove(ch);
      count.decrementAndGet();
    });
    return state;
  }

  /** Closes the connection idle the longest; false when none is idle. */
  private boolean evictOldestIdle() {
    while (true) {
      Channel oldest = null;
      State oldestState = null;
      for (Map.Entry<Channel, State> e : open.entrySet()) {
        State s = e.getValue();
        if (s.idle && !s.evicting.get()
            && (oldestState == null || s.idleSince < oldestState.idleSince)) {
          oldest = e.getKey();
          oldestState = s;
        }
      }
      if (oldest == null) {
        return false;
      }
      if (oldestState.evicting.compareAndSet(false, true)) {
        evicted.increment();
        oldest.close(); // its close listener counts it out
        return true;
      }
    }
  }

  public int openConnections() {
    return count.get();
  }

  /** Connections closed at accept because every open connection was busy. */
  public long refusedAtAccept() {
    return refused.sum();
  }

  /** Idle connections closed to make room for a new one. */
  public long idleEvicted() {
    return evicted.sum();
  }

  public int max() {
    return max;
  }
}
