package dev.radixserve.server.engine;

import dev.radixserve.server.config.SchedulePolicy;
import dev.radixserve.server.spec.Speculation;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Decides what each forward step computes (continuous batching).
 *
 * <p>Running sequences come first, in admission order: each gets its remaining tokens (one for a
 * decode, a chunk of its prompt while prefilling) within the step's token budget, and a prompt
 * chunk is at most {@code prefillChunkSize} tokens, so a long prompt takes several steps and
 * leaves budget for the requests behind it (head-of-line blocking is bounded by
 * {@code ceil(prompt / prefillChunkSize)} steps). When the pool cannot grow a running sequence,
 * the most recently admitted one is preempted (its blocks freed; it is recomputed later, from the
 * cache when it is still there). Waiting sequences are then admitted while budget, sequence slots
 * and blocks (free plus evictable) last. With fair shares on, clients take turns by their shares
 * first and a sequence deserving a slot may preempt one over its share ({@link FairShare}).
 * Within a client the order is: lower priority value first, preempted sequences, then each
 * waiting sequence ranked by how many sequences of its request run or wait before it, so the
 * k-th prompt of one request never goes before the first prompt of a request that arrived later.
 * Within a rank it follows the policy: {@code LPM} takes the longest cached prefix first and,
 * among requests sharing a prefix that is not cached yet, admits one and lets the others wait
 * until its prompt's chunks are cached, so the shared part is computed once; it uses arrival
 * order when more than {@value #LPM_MAX_WAITING} wait.
 *
 * <p>A sequence that cannot be admitted while nothing runs never will be (it needs more blocks
 * than the pool or more slots than {@code maxNumSeqs}); the HTTP layer refuses such requests,
 * and should one get here it is set aside for {@link #takeNeverAdmissible} instead of blocking
 * the line.
 */
final class Scheduler {

  static final int LPM_MAX_WAITING = 128;

  private final SequenceBlocks blocks;
  private final SchedulePolicy policy;
  private final int maxNumSeqs;
  private final int maxBatchedTokens;
  private final int prefillChunkSize;
  private final EngineObserver observer;
  private final FairShare fair;
  private final Speculator speculator;
  private final Deque<Sequence> waiting = new ArrayDeque<>();
  private final List<Sequence> running = new ArrayList<>();
  private final List<Sequence> neverAdmissible = new ArrayList<>();
  private long admissions;

  Scheduler(SequenceBlocks blocks, SchedulePolicy policy, int maxNumSeqs, int maxBatchedTokens,
      int prefillChunkSize, Engine.FairShareSettings fairShare, EngineObserver observer) {
    this(blocks, policy, maxNumSeqs, maxBatchedTokens, prefillChunkSize, fairShare, observer,
        new Speculator(Speculation.off(), Optional.empty(), observer));
  }

  /** @param speculator drafts tokens for decoding sequences to verify in their step */
  Scheduler(SequenceBlocks blocks, SchedulePolicy policy, int maxNumSeqs, int maxBatchedTokens,
      int prefillChunkSize, Engine.FairShareSettings fairShare, EngineObserver observer,
      Speculator speculator) {
    this.speculator = speculator;
    this.blocks = blocks;
    this.fair = new FairShare(maxNumSeqs, fairShare);
    this.policy = policy;
    this.maxNumSeqs = maxNumSeqs;
    this.maxBatchedTokens = maxBatchedTokens;
    this.prefillChunkSize = prefillChunkSize;
    this.observer = observer;
  }

  void enqueue(Sequence s) {
    waiting.addLast(s);
  }

  List<Sequence> running() {
    return running;
  }

  Deque<Sequence> waiting() {
    return waiting;
  }

  boolean hasWork() {
    return !running.isEmpty() || !waiting.isEmpty();
  }

  /** Waiting sequences found impossible to admit since the last call (still in the queue). */
  List<Sequence> takeNeverAdmissible() {
    if (neverAdmissible.isEmpty()) {
      return List.of();
    }
    List<Sequence> out = List.copyOf(neverAdmissible);
    neverAdmissible.clear();
    return out;
  }

  /** Tokens {@code s} computes next: the rest of it, within the budget and the prefill chunk. */
  private int tokensFor(Sequence s, int budget) {
    return Math.min(s.length() - s.numComputed, Math.min(budget, prefillChunkSize));
  }

  /** True when a step could do something: a sequence runs or one waits for no load. */
  boolean canStep() {
    if (!running.isEmpty()) {
      return true;
    }
    for (Sequence s : waiting) {
      if (!blocks.loading(s)) {
        return true;
      }
    }
    return false;
  }

  ScheduledStep schedule() {
    blocks.finishLoads();
    speculator.startStep();
    List<ScheduledStep.Chunk> chunks = new ArrayList<>();
    int budget = maxBatchedTokens;
    boolean preempted = false;
    // with every slot taken, admission only runs when a fair share may free one
    boolean full = running.size() >= maxNumSeqs;
    FairShare.Order order = fair.enabled() && !waiting.isEmpty()
        && (!full || fair.mayPreempt(running, waiting, fair.share(running, waiting)))
        ? makeRoom() : null;
    for (int i = 0; i < running.size() && budget > 0; i++) {
      Sequence s = running.get(i);
      int want = tokensFor(s, budget);
      boolean selfPreempted = false;
      while (!selfPreempted && !blocks.ensureCapacity(s, s.numComputed + want)) {
        Sequence victim = running.getLast();
        preempt(victim);
        preempted = true;
        selfPreempted = victim == s;
      }
      if (selfPreempted) {
        break; // s was the newest: nothing after it is left
      }
      ScheduledStep.Chunk chunk = want == 1
          ? decodeChunk(i, budget - 1, maxBatchedTokens - budget + running.size() - i)
          : new ScheduledStep.Chunk(s, want);
      chunks.add(chunk);
      budget -= chunk.tokens();
    }
    if (!preempted && (order != null || (!full && !waiting.isEmpty()))) {
      admit(chunks, budget, order != null ? order : admissionOrder());
    }
    return new ScheduledStep(chunks);
  }

  /**
   * One token of running sequence {@code i}, and the draft tokens the speculator proposes after
   * it where the budget and the free blocks have room: blocks the running sequences after it
   * need for this step are left to them, so a draft never makes the scheduler evict or preempt.
   *
   * @param baseRows the step's tokens so far, and one for {@code s} and each running sequence
   *     after it
   */
  private ScheduledStep.Chunk decodeChunk(int i, int budget, int baseRows) {
    Sequence s = running.get(i);
    int[] draft = speculator.draft(s, running.size(), baseRows, () -> {
      int reserve = 0;
      for (int j = i + 1; j < running.size(); j++) {
        Sequence o = running.get(j);
        int next = o.numComputed + Math.min(o.length() - o.numComputed, prefillChunkSize);
        reserve += Math.max(0, SequenceBlocks.blocksFor(next, blocks.blockSize()) - o.tableSize());
      }
      return Math.min(budget, blocks.draftRoom(s, reserve));
    });
    if (draft.length == 0) {
      return new ScheduledStep.Chunk(s, 1);
    }
    if (!blocks.ensureCapacity(s, s.numComputed + 1 + draft.length)) {
      throw new IllegalStateException("a draft of " + draft.length + " tokens for " + s
          + " found no blocks for it");
    }
    return new ScheduledStep.Chunk(s, draft);
  }

  /** Slots {@code s} takes when admitted: its choices, before they fork. */
  private static int slots(Sequence s) {
    return s.forked || s.request.n() == 1 || s.choice != 0 ? 1 : s.request.n();
  }

  /**
   * The fair admission order of this step, after preempting, for each waiting sequence in that
   * order that deserves a slot and finds none free, a running sequence over its share ({@link
   * FairShare#victimFor}). The sequences the slots were planned (or freed) for go first, so a
   * freed slot cannot go to someone else once the counts have changed; the victims go last.
   */
  private FairShare.Order makeRoom() {
    FairShare.Order order = admissionOrder();
    int free = maxNumSeqs - running.size();
    int wanted = 0;
    for (Sequence w : waiting) {
      wanted += slots(w);
    }
    if (wanted <= free) {
      return order;
    }
    int share = fair.share(running, waiting);
    FairShare.Counts counts = FairShare.Counts.of(running);
    List<Sequence> planned = new ArrayList<>();
    List<Sequence> rest = new ArrayList<>();
    List<Sequence> victims = new ArrayList<>();
    // who found no victim: another sequence of the same request and priority finds none either
    // (the counts only grow as sequences are planned), which keeps a long queue linear
    Set<String> noVictim = new HashSet<>();
    for (Sequence w : order.sequences()) {
      int slots = slots(w);
      if (slots > maxNumSeqs) {
        planned.add(w); // admit() sets it aside in its turn
        continue;
      }
      String key = w.request.group() + '\u0000' + w.request.priority();
      while (free < slots && !noVictim.contains(key)) {
        Sequence victim = fair.victimFor(w, running, counts, share);
        if (victim == null) {
          noVictim.add(key);
          break;
        }
        counts.remove(victim);
        preempt(victim);
        victims.add(victim);
        observer.fairSharePreempted();
        free++;
      }
      if (free >= slots) {
        free -= slots;
        counts.add(w);
        planned.add(w);
      } else {
        rest.add(w);
      }
    }
    planned.addAll(rest);
    planned.addAll(victims);
    return new FairShare.Order(planned, order.jumped());
  }

  private void admit(List<ScheduledStep.Chunk> chunks, int budget, FairShare.Order order) {
    for (Sequence s : order.sequences()) {
      int slots = slots(s);
      if (blocks.loading(s)) {
        continue; // it waits for its blocks; nothing behind it does
      }
      if (slots > maxNumSeqs) {
        neverAdmissible.add(s);
        continue;
      }
      if (budget <= 0 || running.size() + slots > maxNumSeqs) {
        return;
      }
      if (policy == SchedulePolicy.LPM && sharesUncachedPrefix(s)) {
        continue;
      }
      if (blocks.startLoad(s)) {
        continue;
      }
      int needed = SequenceBlocks.blocksFor(s.length() + 1, blocks.blockSize());
      int cachedTokens = blocks.admit(s);
      if (needed - s.tableSize() > blocks.available()) {
        blocks.release(s);
        if (running.isEmpty()) {
          if (blocks.loadsInFlight() || blocks.unpinLoaded(waiting)) {
            return; // blocks held for other waiting sequences' loads come back first
          }
          neverAdmissible.add(s); // nothing holds blocks: the whole pool is too small for it
          continue;
        }
        return; // head of line waits: skipping it would starve long prompts
      }
      int want = tokensFor(s, budget);
      if (!blocks.ensureCapacity(s, s.numComputed + want)) {
        throw new IllegalStateException("admission of " + s + " found " + blocks.available()
            + " blocks available but could not allocate for " + want + " tokens");
      }
      waiting.remove(s);
      running.add(s);
      if (order.jumped().contains(s)) {
        observer.fairShareDeferred();
      }
      s.admittedSeq = ++admissions;
      s.prefillEnd = s.length();
      if (!s.state.admitted) {
        s.state.admitted = true;
        s.state.cachedTokens = cachedTokens;
        observer.admitted(System.nanoTime() - s.state.arrivalNanos, s.length() - 1, cachedTokens);
      }
      if (s.matchedNode != null) {
        observer.prefixMatched(s.request.id(), s.choice, s.request.namespace(),
            s.matchedNode.id(), cachedTokens, s.length() - 1);
      }
      chunks.add(new ScheduledStep.Chunk(s, want));
      budget -= want;
    }
  }

  /**
   * Priority first, then preempted sequences, then the rank of each among its request's
   * sequences (how many of them run or wait ahead), then the policy's order; the sort is stable,
   * so equal keys keep arrival order. With fair shares on, the clients' lines are then
   * interleaved by their shares.
   */
  private FairShare.Order admissionOrder() {
    List<Sequence> order = new ArrayList<>(waiting);
    Map<Sequence, Integer> arrival = new IdentityHashMap<>();
    for (Sequence s : order) {
      arrival.put(s, arrival.size());
    }
    Map<String, Integer> ahead = new HashMap<>();
    for (Sequence r : running) {
      ahead.merge(r.request.group(), 1, Integer::sum);
    }
    Map<Sequence, Integer> rank = new IdentityHashMap<>();
    for (Sequence s : order) {
      rank.put(s, s.state.admitted ? -1 : ahead.merge(s.request.group(), 1, Integer::sum) - 1);
    }
    Comparator<Sequence> key = Comparator.comparingInt((Sequence s) -> s.request.priority())
        .thenComparing(rank::get);
    if (policy == SchedulePolicy.LPM && blocks.cachingEnabled()
        && waiting.size() <= LPM_MAX_WAITING) {
      Map<Sequence, Integer> hit = new IdentityHashMap<>();
      for (Sequence s : order) {
        hit.put(s, blocks.probe(s));
      }
      key = key.thenComparing(Comparator.comparing((Sequence s) -> hit.get(s)).reversed());
    }
    order.sort(key);
    if (!fair.enabled()) {
      return new FairShare.Order(order, Set.of());
    }
    return fair.order(order, arrival, FairShare.Counts.of(running), fair.share(running, waiting));
  }

  /**
   * True when {@code s} shares at least one block beyond its cached prefix with a running
   * sequence whose prompt is still being computed (admitted in this step or an earlier one): it
   * waits, and hits the cache as that one's chunks are inserted, rather than computing the same
   * tokens beside it. Many requests that arrive together with a new system prompt compute it
   * once (SGLang's in-batch prefix caching); the wait lasts until the shared part is computed,
   * at most its length over the prefill chunk in steps.
   */
  private boolean sharesUncachedPrefix(Sequence s) {
    if (!blocks.cachingEnabled() || s.needsPromptLogits()) {
      return false; // a sequence that needs its prompt's logits computes it all anyway
    }
    int cached = -1;
    for (Sequence other : running) {
      // a decoding sequence's prompt is in the cache already; another namespace's is not ours
      if (other.numComputed >= other.prefillEnd
          || !other.request.namespace().equals(s.request.namespace())) {
        continue;
      }
      int common = commonPrefix(s, other); // unrelated prompts differ at once: no probe then
      if (common < blocks.blockSize()) {
        continue;
      }
      if (cached < 0) {
        cached = blocks.probe(s);
        cached -= cached % blocks.blockSize(); // a partial block is no reason not to wait
      }
      if (common - cached >= blocks.blockSize()) {
        return true;
      }
    }
    return false;
  }

  private static int commonPrefix(Sequence a, Sequence b) {
    int n = Math.min(a.length() - 1, b.length() - 1);
    int i = 0;
    while (i < n && a.token(i) == b.token(i)) {
      i++;
    }
    return i;
  }

  /** Frees {@code s}'s blocks (caching what it computed) and puts it first in line again. */
  void preempt(Sequence s) {
    running.remove(s);
    blocks.cacheAndRelease(s);
    waiting.addFirst(s);
    observer.preempted();
  }

  /** Removes a finished or aborted sequence from wherever it is (its blocks already released). */
  void remove(Sequence s) {
    if (!running.remove(s)) {
      waiting.remove(s);
    }
  }

  /** Adds a forked choice right behind its parent's admission. */
  void addForked(Sequence child) {
    child.admittedSeq = ++admissions;
    child.prefillEnd = child.promptLen;
    running.add(child);
  }
}
