package dev.radixserve.bench;

import dev.radixserve.cache.BlockHasher;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;

/**
 * Sends each request to one of several replicas, picked either in turn or by the longest prefix
 * each replica holds according to its KV events: a small client-side scorer, there to measure
 * what a cache-aware router gains, not to be one. Ties (no replica holds any of the prompt) go to
 * the replica with the fewest requests in flight, then the lowest index.
 */
final class RoutedSender implements RequestSender {

  /** How a replica is picked. */
  enum Policy {
    ROUND_ROBIN("round-robin"),
    PREFIX("prefix");

    final String label;

    Policy(String label) {
      this.label = label;
    }
  }

  private final List<CompletionClient> replicas;
  private final List<KvEventFollower> followers;
  private final BlockHasher hasher;
  private final Policy policy;
  private final AtomicInteger turn = new AtomicInteger();
  private final AtomicIntegerArray inFlight;
  private final AtomicIntegerArray sent;

  /**
   * @param followers one per replica, same order (unused for round-robin)
   * @param hasher the replicas' block hash (model name and block size)
   */
  RoutedSender(List<CompletionClient> replicas, List<KvEventFollower> followers,
      BlockHasher hasher, Policy policy) {
    this.replicas = replicas;
    this.followers = followers;
    this.hasher = hasher;
    this.policy = policy;
    this.inFlight = new AtomicIntegerArray(replicas.size());
    this.sent = new AtomicIntegerArray(replicas.size());
  }

  @Override
  public RequestRecord send(BenchRequest request, int sendOrder) {
    int r = pick(request.prompt());
    inFlight.incrementAndGet(r);
    sent.incrementAndGet(r);
    try {
      return replicas.get(r).send(request, sendOrder);
    } finally {
      inFlight.decrementAndGet(r);
    }
  }

  /** Requests sent to each replica so far. */
  int[] sentPerReplica() {
    int[] out = new int[sent.length()];
    for (int i = 0; i < out.length; i++) {
      out[i] = sent.get(i);
    }
    return out;
  }

  private int pick(int[] prompt) {
    if (policy == Policy.ROUND_ROBIN) {
      return Math.floorMod(turn.getAndIncrement(), replicas.size());
    }
    // like the server's match: whole blocks, never the prompt's last token
    long[] chain = hasher.chain("", prompt, (prompt.length - 1) / hasher.blockSize());
    int best = 0;
    int bestBlocks = -1;
    for (int i = 0; i < replicas.size(); i++) {
      int blocks = followers.get(i).prefixBlocks(chain);
      if (blocks > bestBlocks || blocks == bestBlocks && inFlight.get(i) < inFlight.get(best)) {
        best = i;
        bestBlocks = blocks;
      }
    }
    return best;
  }
}
