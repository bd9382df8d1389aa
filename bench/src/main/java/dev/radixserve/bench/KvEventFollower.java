package dev.radixserve.bench;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * Follows one replica's KV events the way a router does and keeps the set of block hashes the
 * replica holds: a SUB socket for the live stream and, when the replica serves replays, a DEALER
 * that asks for what a sequence gap hides (a subscriber that connects late, or one that fell
 * behind the high-water mark). Every event is checked against the set: a store of a hash already
 * held, a removal of one not held, a parent never stored, or a gap that replay cannot fill is an
 * anomaly, listed by {@link #anomalies()}.
 */
public final class KvEventFollower implements AutoCloseable {

  private static final int MAX_ANOMALIES = 20;

  private final ZContext context = new ZContext();
  private final ZMQ.Socket sub;
  private final ZMQ.Socket replay;
  private final Consumer<KvEventDecoder.Event> observer;
  private final Set<Long> blocks = new HashSet<>();
  private final List<String> anomalies = new ArrayList<>();
  private final Thread thread;
  private volatile boolean running = true;
  private volatile long catchUpTo = -1; // a sequence the replica is known to have published
  private long next; // the sequence expected next
  private long applied = -1;
  private long askedUpTo = -1; // the last catchUpTo served, so that a failed replay is not retried

  /**
   * @param replayEndpoint the replica's ROUTER address, or null to live with gaps
   * @param topicPrefix subscription filter ("" for all)
   * @param observer told about every event applied, in order (on the follower's thread)
   */
  public KvEventFollower(String endpoint, String replayEndpoint, String topicPrefix,
      Consumer<KvEventDecoder.Event> observer) {
    this.observer = observer;
    sub = context.createSocket(SocketType.SUB);
    sub.setReceiveTimeOut(50);
    sub.subscribe(topicPrefix.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    ZmqConnect.connect(sub, endpoint);
    if (replayEndpoint != null) {
      replay = context.createSocket(SocketType.DEALER);
      replay.setReceiveTimeOut(5000);
      ZmqConnect.connect(replay, replayEndpoint);
    } else {
      replay = null;
    }
    thread = Thread.ofPlatform().name("kv-event-follower").daemon().unstarted(this::run);
    thread.start();
  }

  /** The hashes the replica holds, as far as the events received say. */
  public synchronized Set<Long> blocks() {
    return Set.copyOf(blocks);
  }

  /** Leading entries of {@code chain} this replica holds (the longest cached prefix, in blocks). */
  public synchronized int prefixBlocks(long[] chain) {
    int n = 0;
    while (n < chain.length && blocks.contains(chain[n])) {
      n++;
    }
    return n;
  }

  /** The sequence number of the last batch applied; -1 before the first. */
  public synchronized long lastApplied() {
    return applied;
  }

  /**
   * Fetches every batch up to {@code seq} from the replay socket if the live stream has not
   * brought it (on the follower's thread, within one receive timeout). A gap shows only when a
   * later batch arrives, so batches a subscriber joined too late for (ZeroMQ's slow joiner) stay
   * unseen while the replica is idle; a router that learns the replica's last sequence another way
   * (its metrics, a health check) asks for them here.
   */
  public void catchUpTo(long seq) {
    catchUpTo = seq;
  }

  /** The first anomalies seen (at most 20, then "... and more"); empty when all was consistent. */
  public synchronized List<String> anomalies() {
    return List.copyOf(anomalies);
  }

  private void run() {
    try {
      while (running) {
        byte[] topic = sub.recv(0);
        if (topic == null) { // receive timeout: look at running and catchUpTo again
          long known = catchUpTo;
          if (replay != null && known >= next && known > askedUpTo) {
            askedUpTo = known;
            replayFrom(known + 1);
            if (next <= known) {
              anomaly("replay did not reach batch " + known);
            }
          }
          continue;
        }
        byte[] seqFrame = sub.recv(0);
        byte[] payload = sub.recv(0);
        long seq = ByteBuffer.wrap(seqFrame).getLong();
        if (seq > next && replay != null) {
          replayFrom(seq);
        }
        deliver(seq, payload);
      }
    } finally {
      context.close();
    }
  }

  /** Asks for [next, seq) and applies what comes back, in order. */
  private void replayFrom(long seq) {
    replay.sendMore(new byte[0]);
    replay.send(ByteBuffer.allocate(8).putLong(next).array(), 0);
    while (true) {
      byte[] delimiter = replay.recv(0);
      if (delimiter == null) {
        anomaly("replay from " + next + " timed out");
        return;
      }
      long s = ByteBuffer.wrap(replay.recv(0)).getLong();
      byte[] payload = replay.recv(0);
      if (s < 0) {
        return; // end of replay
      }
      if (s < seq) {
        deliver(s, payload);
      }
    }
  }

  private synchronized void deliver(long seq, byte[] payload) {
    if (seq < next) {
      return; // already applied (from a replay)
    }
    if (seq > next) {
      anomaly("sequence gap: batches " + next + ".." + (seq - 1) + " lost");
    }
    for (KvEventDecoder.Event e : KvEventDecoder.decode(payload).events()) {
      apply(e);
      observer.accept(e);
    }
    next = seq + 1;
    applied = seq;
  }

  private void apply(KvEventDecoder.Event e) {
    switch (e.type()) {
      case "BlockStored" -> {
        if (e.parentHash() != null && !blocks.contains(e.parentHash())) {
          anomaly("stored under parent " + Long.toUnsignedString(e.parentHash())
              + ", which is not held");
        }
        for (long h : e.hashes()) {
          if (!blocks.add(h)) {
            anomaly("stored " + Long.toUnsignedString(h) + " twice");
          }
        }
      }
      case "BlockRemoved" -> {
        for (long h : e.hashes()) {
          if (!blocks.remove(h)) {
            anomaly("removed " + Long.toUnsignedString(h) + ", which is not held");
          }
        }
      }
      default -> blocks.clear(); // AllBlocksCleared
    }
  }

  private void anomaly(String what) {
    synchronized (this) {
      if (anomalies.size() < MAX_ANOMALIES) {
        anomalies.add(what);
      } else if (anomalies.size() == MAX_ANOMALIES) {
        anomalies.add("... and more");
      }
    }
  }

  @Override
  public void close() {
    running = false;
    try {
      thread.join(2000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
