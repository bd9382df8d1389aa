package dev.radixserve.server.engine;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.TreeSet;

/**
 * Fair shares of the sequence slots ({@code maxNumSeqs}) between clients, and between the
 * requests of one client.
 *
 * <p>While clients wait, each client with work (a sequence running or waiting) is entitled to
 * {@code share = max(1, maxNumSeqs / clients)} running sequences. Admission takes, one sequence
 * at a time, the head of the client that is below its share (before one at or above it), then
 * whose head has the lower priority value, then that runs fewer sequences, then whose head
 * comes first in the caller's order (the longest cached prefix, for LPM); within a client, the caller's order (priority, preempted first, the k-th prompt of
 * a request after the first prompt of a later request, then the policy's order, LPM). It wastes
 * no slot: a client over its share still takes slots no one below theirs can use.
 *
 * <p>Shares are kept by preemption (by recompute, from the prefix cache where the blocks are
 * still there), since a sequence once admitted otherwise keeps its slot until it finishes. A
 * waiting sequence that deserves a slot and finds none free preempts a running one that is
 * <ol>
 *   <li>of another client above its share, while its own client is below its share; or
 *   <li>of its own client, with a worse (higher) priority (vLLM's priority preemption, within
 *       one client); or
 *   <li>of another request of its own client, of no better priority, that runs more than
 *       {@code maxSeqsPerRequest}, while its own request runs fewer.
 * </ol>
 * The most over-share client's worst-priority, newest sequence goes first. So a flood of
 * high-priority requests from one client takes at most its share while others wait, and one
 * request of many prompts cannot hold every slot of its client while another request waits.
 */
final class FairShare {

  /**
   * The admission order of one step.
   *
   * @param jumped sequences placed ahead of an earlier waiting sequence of another client by
   *     the fair share (counted as deferrals when they are admitted)
   */
  record Order(List<Sequence> sequences, Set<Sequence> jumped) {}

  private final int maxNumSeqs;
  private final Engine.FairShareSettings settings;

  FairShare(int maxNumSeqs, Engine.FairShareSettings settings) {
    this.maxNumSeqs = maxNumSeqs;
    this.settings = settings;
  }

  boolean enabled() {
    return settings.enabled();
  }

  int maxSeqsPerRequest() {
    return settings.maxSeqsPerRequest();
  }

  /** Running sequences per client and per request, as a step goes along. */
  static final class Counts {
    private final Map<String, Integer> byClient = new HashMap<>();
    private final Map<String, Integer> byRequest = new HashMap<>();

    static Counts of(Collection<Sequence> running) {
      Counts c = new Counts();
      running.forEach(c::add);
      return c;
    }

    void add(Sequence s) {
      byClient.merge(s.request.client(), 1, Integer::sum);
      byRequest.merge(s.request.group(), 1, Integer::sum);
    }

    void remove(Sequence s) {
      byClient.merge(s.request.client(), -1, Integer::sum);
      byRequest.merge(s.request.group(), -1, Integer::sum);
    }

    int client(String client) {
      return byClient.getOrDefault(client, 0);
    }

    int request(String group) {
      return byRequest.getOrDefault(group, 0);
    }
  }

  /** The share of each client while these sequences run and wait. */
  int share(Collection<Sequence> running, Collection<Sequence> waiting) {
    Set<String> clients = new HashSet<>();
    running.forEach(s -> clients.add(s.request.client()));
    waiting.forEach(s -> clients.add(s.request.client()));
    return Math.max(1, maxNumSeqs / Math.max(1, clients.size()));
  }

  /**
   * Interleaves the clients of {@code inClientOrder} (every waiting sequence, already in the
   * order each client's own sequences should go in) by their shares.
   *
   * @param arrival each sequence's place in the waiting line (smaller came first)
   */
  Order order(List<Sequence> inClientOrder, Map<Sequence, Integer> arrival, Counts running,
      int share) {
    Map<String, ClientLine> lines = new LinkedHashMap<>();
    Map<Sequence, Integer> place = new IdentityHashMap<>();
    for (Sequence s : inClientOrder) {
      place.put(s, place.size());
      lines.computeIfAbsent(s.request.client(), c -> new ClientLine(c, running.client(c)))
          .add(s, arrival.get(s));
    }
    // the earliest waiting sequence of each client, to tell when one goes ahead of another's
    TreeSet<ClientLine> byEarliest = new TreeSet<>(Comparator.comparingInt(ClientLine::earliest)
        .thenComparing(ClientLine::client));
    byEarliest.addAll(lines.values());
    PriorityQueue<ClientLine> next = new PriorityQueue<>(Comparator
        .comparingInt((ClientLine l) -> l.running >= share ? 1 : 0)
        .thenComparingInt(l -> l.head().request.priority())
        .thenComparingInt(l -> l.running)
        .thenComparingInt(l -> place.get(l.head())));
    next.addAll(lines.values());
    List<Sequence> out = new ArrayList<>(inClientOrder.size());
    Set<Sequence> jumped = Collections.newSetFromMap(new IdentityHashMap<>());
    while (!next.isEmpty()) {
      ClientLine line = next.poll();
      byEarliest.remove(line);
      Sequence s = line.take(arrival.get(line.head()));
      ClientLine earliestOther = byEarliest.isEmpty() ? null : byEarliest.first();
      if (earliestOther != null && earliestOther.earliest() < arrival.get(s)) {
        jumped.add(s);
      }
      out.add(s);
      line.running++;
      if (!line.isEmpty()) {
        byEarliest.add(line);
        next.add(line);
      }
    }
    return new Order(out, jumped);
  }

  /**
   * False when no waiting sequence may preempt any running one (see {@link #victimFor}); may say
   * true when none may. Linear in the sequences, so a full batch with a long queue behind it does
   * not order the whole queue every step only to admit nothing.
   */
  boolean mayPreempt(List<Sequence> running, Collection<Sequence> waiting, int share) {
    Counts counts = Counts.of(running);
    boolean someoneOver = false;
    Map<String, Integer> worstPriority = new HashMap<>();
    Map<String, Boolean> requestOverCap = new HashMap<>();
    for (Sequence t : running) {
      String c = t.request.client();
      someoneOver |= counts.client(c) > share;
      worstPriority.merge(c, t.request.priority(), Math::max);
      if (counts.request(t.request.group()) > maxSeqsPerRequest()) {
        requestOverCap.put(c, true);
      }
    }
    for (Sequence w : waiting) {
      String c = w.request.client();
      if ((someoneOver && counts.client(c) < share)
          || w.request.priority() < worstPriority.getOrDefault(c, Integer.MIN_VALUE)
          || (requestOverCap.containsKey(c)
              && counts.request(w.request.group()) < maxSeqsPerRequest())) {
        return true;
      }
    }
    return false;
  }

  /**
   * The running sequence that {@code waiting} may preempt for a slot, or null when it may take
   * none (see the class comment for who may preempt whom).
   */
  Sequence victimFor(Sequence waiting, List<Sequence> running, Counts counts, int share) {
    String client = waiting.request.client();
    boolean clientBelowShare = counts.client(client) < share;
    boolean requestBelowCap = counts.request(waiting.request.group()) < maxSeqsPerRequest();
    Sequence best = null;
    int bestExcess = 0;
    for (Sequence t : running) {
      String other = t.request.client();
      boolean eligible;
      if (!other.equals(client)) {
        eligible = clientBelowShare && counts.client(other) > share;
      } else {
        eligible = t.request.priority() > waiting.request.priority()
            || (requestBelowCap && !t.request.group().equals(waiting.request.group())
                && counts.request(t.request.group()) > maxSeqsPerRequest()
                && t.request.priority() >= waiting.request.priority());
      }
      if (!eligible) {
        continue;
      }
      int excess = counts.client(other) - share;
      if (best == null || excess > bestExcess
          || (excess == bestExcess && worseThan(t, best))) {
        best = t;
        bestExcess = excess;
      }
    }
    return best;
  }

  /** Worse priority first, then the newest admission (the one that loses least when redone). */
  private static boolean worseThan(Sequence a, Sequence b) {
    if (a.request.priority() != b.request.priority()) {
      return a.request.priority() > b.request.priority();
    }
    return a.admittedSeq > b.admittedSeq;
  }

  /** One client's waiting sequences in its own order. */
  private static final class ClientLine {
    private final String client;
    private final ArrayDeque<Sequence> queue = new ArrayDeque<>();
    private final TreeSet<Integer> arrivals = new TreeSet<>();
    int running;

    ClientLine(String client, int running) {
      this.client = client;
      this.running = running;
    }

    String client() {
      return client;
    }

    void add(Sequence s, int arrival) {
      queue.addLast(s);
      arrivals.add(arrival);
    }

    Sequence head() {
      return queue.peekFirst();
    }

    Sequence take(int arrival) {
      arrivals.remove(arrival);
      return queue.pollFirst();
    }

    boolean isEmpty() {
      return queue.isEmpty();
    }

    int earliest() {
      return arrivals.first();
    }
  }
}
