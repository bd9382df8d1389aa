package dev.radixserve.server.kvevents;

import dev.radixserve.cache.CacheListener;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Logger;

/**
 * Turns the radix cache's structural changes into {@link CacheChange} records for the publisher
 * thread. Runs on the engine thread: each call is a map update and a non-blocking offer; when the
 * queue is full the record is dropped and counted, so a stalled publisher never slows the engine.
 *
 * <p>Only whole blocks are published (vLLM hashes whole blocks; a partial block is never filled
 * in place, a continuation copies it). Which whole blocks a node brings is derived from token
 * positions alone, so nodes and splits at any token (not only at block boundaries) are handled:
 * a node spanning path tokens {@code [start, end)} owns the blocks that end inside it,
 *
 * <pre>
 *   blocks [floor(start / B), floor(end / B))        B = 4, node [6, 13): blocks 1 and 2
 *   |0 1 2 3|4 5 6 7|8 9 10 11|12 13 ...               block 1 ends at 7, block 2 at 11;
 *               ^start=6        ^end=13                block 3 (12..15) is partial: ignored
 * </pre>
 *
 * so every whole block of the tree is owned by exactly one node and a split changes nothing
 * that a subscriber sees. The recorder keeps each node's span (from its parent's end at store
 * time, updated on splits). Every eviction is recorded block by block, also one that empties
 * the tree; {@link CacheChange.Cleared} is recorded only for a reset that left it empty.
 */
final class CacheEventRecorder implements CacheListener {

  /** Path tokens {@code [start, end)} of one node. */
  private static final class Span {
    int start;
    final int end;

    Span(int start, int end) {
      this.start = start;
      this.end = end;
    }
  }

  private static final Logger LOG = Logger.getLogger(CacheEventRecorder.class.getName());

  private final int blockSize;
  private final BlockingQueue<CacheChange> queue;
  private final Map<Long, Span> spans = new HashMap<>();
  private final AtomicLong recorded = new AtomicLong();
  private final AtomicLong dropped = new AtomicLong();

  CacheEventRecorder(int blockSize, int queueSize) {
    this.blockSize = blockSize;
    this.queue = new LinkedBlockingQueue<>(queueSize);
  }

  BlockingQueue<CacheChange> queue() {
    return queue;
  }

  /** Records queued so far. */
  long recorded() {
    return recorded.get();
  }

  /** Records the queue had no room for (events lost to subscribers). */
  long dropped() {
    return dropped.get();
  }

  @Override
  public void stored(String namespace, long nodeId, long parentId, int[] pathTokens,
      int[] blocks) {
    Span parent = spans.get(parentId); // absent: a namespace root
    Span span = new Span(parent == null ? 0 : parent.end, pathTokens.length);
    spans.put(nodeId, span);
    int from = span.start / blockSize;
    int to = span.end / blockSize;
    if (to > from) {
      offer(new CacheChange.Stored(namespace, pathTokens, from, to));
    }
  }

  @Override
  public void split(String namespace, long nodeId, long upperId, int upperTokens) {
    Span lower = spans.get(nodeId);
    if (lower == null) {
      unknown("split", nodeId);
      return;
    }
    spans.put(upperId, new Span(lower.start, lower.start + upperTokens));
    lower.start += upperTokens;
  }

  @Override
  public void evicted(String namespace, long nodeId, int[] pathTokens, int[] blocks) {
    Span span = spans.remove(nodeId);
    if (span == null) {
      unknown("eviction", nodeId);
      return;
    }
    int from = span.start / blockSize;
    int to = span.end / blockSize;
    if (to > from) {
      offer(new CacheChange.Removed(namespace, pathTokens, from, to));
    }
  }

  @Override
  public void cleared() {
    offer(new CacheChange.Cleared());
  }

  /** A tier below the pool now holds a block (any thread: only the queue is touched). */
  void tierStored(String medium, long hash, Long parentHash, int[] tokens, String salt) {
    offer(new CacheChange.TierStored(medium, hash, parentHash, tokens, salt));
  }

  /** A tier below the pool no longer holds a block (any thread). */
  void tierRemoved(String medium, long hash) {
    offer(new CacheChange.TierRemoved(medium, hash));
  }

  /**
   * A node this recorder never saw stored: a bug here, never a reason to throw into the cache
   * (the engine thread is inside a structural change). Logged; its events are lost.
   */
  private void unknown(String what, long nodeId) {
    LOG.severe(() -> "KV events: " + what + " of node " + nodeId + ", which was never stored;"
        + " subscribers' view of this replica may now be wrong");
  }

  private void offer(CacheChange change) {
    if (queue.offer(change)) {
      recorded.incrementAndGet();
    } else {
      dropped.incrementAndGet();
    }
  }
}
