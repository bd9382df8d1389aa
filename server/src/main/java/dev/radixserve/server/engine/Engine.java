package dev.radixserve.server.engine;

import dev.radixserve.cache.CacheNamespace;
import dev.radixserve.cache.BlockPool;
import dev.radixserve.cache.PrefixCache;
import dev.radixserve.cache.RadixCache;
import dev.radixserve.model.ModelRunner;
import dev.radixserve.model.NativeHeap;
import dev.radixserve.model.Tokenizer;
import dev.radixserve.server.config.SchedulePolicy;
import dev.radixserve.server.spec.DraftSource;
import dev.radixserve.server.spec.RadixDraftIndex;
import dev.radixserve.server.spec.Speculation;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The engine thread: the only owner of the scheduler, the prefix cache, the block pool and the
 * model runner. Other threads talk to it through {@link #submit}, {@link #abort} and the query
 * methods, which post messages to its inbox; results go out through each request's
 * {@link TokenSink}. Each loop: drain the inbox → schedule → forward → process outputs.
 */
public final class Engine {

  private static final Logger LOG = Logger.getLogger(Engine.class.getName());
  /** N-grams the draft index keeps: about 15 MB at 8 draft tokens. */
  private static final int RADIX_DRAFT_ENTRIES = 1 << 17;

  /**
   * Engine settings (from ServerConfig).
   *
   * @param fairShare off, or on with the per-request cap; null: on, with a quarter of
   *     {@code maxNumSeqs} per request
   */
  public record Settings(SchedulePolicy policy, int maxNumSeqs, int maxBatchedTokens,
      int prefillChunkSize, int maxQueuedRequests, FairShareSettings fairShare,
      Speculation speculation) {

    public Settings {
      if (fairShare == null) {
        fairShare = new FairShareSettings(true, Math.max(1, maxNumSeqs / 4));
      }
      if (speculation == null) {
        speculation = Speculation.off();
      }
    }

    /** Without speculative decoding. */
    public Settings(SchedulePolicy policy, int maxNumSeqs, int maxBatchedTokens,
        int prefillChunkSize, int maxQueuedRequests, FairShareSettings fairShare) {
      this(policy, maxNumSeqs, maxBatchedTokens, prefillChunkSize, maxQueuedRequests, fairShare,
          null);
    }

    /** Fair shares on, with the default per-request cap. */
    public Settings(SchedulePolicy policy, int maxNumSeqs, int maxBatchedTokens,
        int prefillChunkSize, int maxQueuedRequests) {
      this(policy, maxNumSeqs, maxBatchedTokens, prefillChunkSize, maxQueuedRequests, null);
    }
  }

  /**
   * @param enabled share sequence slots fairly between clients ({@link FairShare}); off: the
   *     order is priority, then the policy's, and nothing is preempted for a share
   * @param maxSeqsPerRequest sequences one request runs at most while another request of its
   *     client waits for a slot
   */
  public record FairShareSettings(boolean enabled, int maxSeqsPerRequest) {
    public FairShareSettings {
      if (maxSeqsPerRequest < 1) {
        throw new IllegalArgumentException("max-seqs-per-request must be >= 1, got "
            + maxSeqsPerRequest);
      }
    }
  }

  private final ModelRunner runner;
  private final Optional<PrefixCache> cache;
  private final Scheduler scheduler;
  /** Drafts for the scheduler; told what each step took, the price of the next drafts. */
  private final Speculator speculator;
  private final SequenceBlocks blocks;
  private final ExecutorService loader;
  private final OutputProcessor outputs;
  private final Map<String, RequestState> requests = new HashMap<>();
  private final LinkedBlockingQueue<EngineMessage> inbox = new LinkedBlockingQueue<>();
  private final AtomicInteger queued = new AtomicInteger();
  /**
   * Requests submitted and not yet finished (counted down when the engine reports them finished,
   * whatever the reason): what a drain waits for. Unlike {@code idle}, which the engine thread
   * recomputes once per loop, it cannot be stale when a request has just been submitted.
   */
  private final AtomicInteger live = new AtomicInteger();
  private final int maxQueued;
  private final Thread thread;
  private volatile boolean accepting = true;
  private volatile boolean idle = true;
  private final IdleTrim idleTrim = new IdleTrim(NativeHeap::trim, System::nanoTime,
      IdleTrim.DELAY_NANOS);
  private final IdleTrim idleCompact = new IdleTrim(IdleTrim::compactJavaHeap, System::nanoTime,
      IdleTrim.COMPACT_DELAY_NANOS);
  private volatile EngineGauges gauges;
  private boolean stopped;

  /**
   * @param cache empty to run with prefix caching off
   * @param eosTokenIds tokens that end a choice (the model's EOS ids) unless it ignores EOS
   */
  public Engine(ModelRunner runner, BlockPool pool, Optional<PrefixCache> cache,
      Tokenizer tokenizer, Set<Integer> eosTokenIds, SamplerFactory samplers, Settings settings,
      EngineObserver observer) {
    this(runner, pool, cache, Optional.empty(), tokenizer, eosTokenIds, samplers, settings,
        observer);
  }

  /**
   * @param tiers cache tiers below the pool (needs {@code cache}): a match loads the blocks they
   *     hold on a loader thread of its own
   */
  public Engine(ModelRunner runner, BlockPool pool, Optional<PrefixCache> cache,
      Optional<BlockTiers> tiers, Tokenizer tokenizer, Set<Integer> eosTokenIds,
      SamplerFactory samplers, Settings settings, EngineObserver observer) {
    this(runner, pool, cache, tiers, tokenizer, eosTokenIds, samplers, settings, observer,
        Optional.empty());
  }

  /**
   * @param drafts a draft source asked instead of the built-in ones when speculation is on (a
   *     test's, proposing what the built-in sources would not, which must know every draft that
   *     is verified)
   */
  Engine(ModelRunner runner, BlockPool pool, Optional<PrefixCache> cache,
      Optional<BlockTiers> tiers, Tokenizer tokenizer, Set<Integer> eosTokenIds,
      SamplerFactory samplers, Settings settings, EngineObserver observer,
      Optional<DraftSource> drafts) {
    this.runner = runner;
    this.cache = cache;
    this.maxQueued = settings.maxQueuedRequests();
    EngineObserver counting = new QueueCountingObserver(observer, queued, live);
    TierLoads loads = null;
    if (tiers.isPresent()) {
      loader = Executors.newSingleThreadExecutor(
          Thread.ofPlatform().name("radixserve-kv-loader").daemon().factory());
      // a finished load wakes an engine that waits for nothing else
      loads = new TierLoads(loader, () -> inbox.add(new EngineMessage.Run(() -> { })));
    } else {
      loader = null;
    }
    blocks = new SequenceBlocks(pool, cache, runner.blockSize(), counting, tiers, loads);
    this.speculator = new Speculator(settings.speculation(), drafts, drafts.isEmpty(),
        speculationIndex(cache, settings.speculation(), runner.blockSize()), counting);
    this.scheduler = new Scheduler(blocks, settings.policy(), settings.maxNumSeqs(),
        settings.maxBatchedTokens(), settings.prefillChunkSize(), settings.fairShare(), counting,
        speculator);
    this.outputs = new OutputProcessor(scheduler, blocks, samplers, tokenizer, eosTokenIds,
        counting, requests, speculator);
    publishGauges();
    this.thread = Thread.ofPlatform().name("radixserve-engine").unstarted(this::run);
  }

  public void start() {
    thread.start();
  }

  /**
   * The index of the cache's token runs that drafts come from: fed by the cache's events from
   * now on, and told what the cache already holds.
   */
  private static Optional<RadixDraftIndex> speculationIndex(Optional<PrefixCache> cache,
      Speculation speculation, int blockSize) {
    // a cache that publishes no events (a test's) drafts from each sequence's own tokens only
    if (!speculation.enabled() || !(cache.orElse(null) instanceof RadixCache radix)) {
      return Optional.empty();
    }
    RadixDraftIndex index = new RadixDraftIndex(blockSize, speculation.maxTokens(),
        RADIX_DRAFT_ENTRIES);
    radix.replay(index);
    radix.addListener(index);
    return Optional.of(index);
  }

  /**
   * Queues a request (any thread).
   *
   * @throws EngineRejectedException when the waiting queue is full or the engine shuts down
   */
  public void submit(EngineRequest request) {
    if (!accepting) {
      throw new EngineRejectedException(EngineRejectedException.Reason.SHUTTING_DOWN,
          "the server is shutting down");
    }
    if (queued.incrementAndGet() > maxQueued) {
      queued.decrementAndGet();
      throw new EngineRejectedException(EngineRejectedException.Reason.QUEUE_FULL,
          "too many waiting requests (max " + maxQueued + ")");
    }
    live.incrementAndGet();
    idle = false;
    inbox.add(new EngineMessage.Submit(inContext(request), System.nanoTime()));
  }

  /**
   * A prompt past the model's long-context length runs in the long context (as transformers'
   * generate() computes it: longrope's long factors for the whole prompt), in its namespace's
   * long-context twin, since its keys are rotated otherwise ({@code ScheduledStep} flags its
   * sequences).
   */
  private EngineRequest inContext(EngineRequest request) {
    return request.promptTokens().length > runner.config().longContextFrom()
        ? request.withNamespace(CacheNamespace.longContext(request.namespace())) : request;
  }

  /** Aborts a request (client gone); its blocks and locks come back in the next loop. */
  public void abort(String requestId) {
    inbox.add(new EngineMessage.Abort(requestId));
  }

  /**
   * Ends one choice of a request as stopped (any thread): the HTTP layer found a stop string in
   * its text. The choice's blocks are cached and released in the next loop; when it was the last
   * unfinished choice the request completes.
   */
  public void finishChoice(String requestId, int choice) {
    inbox.add(new EngineMessage.FinishChoice(requestId, choice));
  }

  public CompletableFuture<Integer> resetPrefixCache() {
    CompletableFuture<Integer> f = new CompletableFuture<>();
    inbox.add(new EngineMessage.ResetPrefixCache(f));
    return f;
  }

  public CompletableFuture<EngineSnapshot> inspect() {
    CompletableFuture<EngineSnapshot> f = new CompletableFuture<>();
    inbox.add(new EngineMessage.Inspect(f));
    return f;
  }

  /**
   * Runs {@code task} on the engine thread between two steps and completes with its result
   * (diagnostics and test hooks that must read engine-owned state, such as the prefix cache).
   */
  public <T> CompletableFuture<T> onEngineThread(Supplier<T> task) {
    CompletableFuture<T> f = new CompletableFuture<>();
    inbox.add(new EngineMessage.Run(() -> {
      try {
        f.complete(task.get());
      } catch (RuntimeException e) {
        f.completeExceptionally(e);
      }
    }));
    return f;
  }

  public EngineGauges gauges() {
    return gauges;
  }

  public boolean isAccepting() {
    return accepting;
  }

  /**
   * Stops taking requests, lets running ones finish within {@code drain}, aborts the rest
   * (their clients get 503) and stops the engine thread.
   */
  public void shutdown(Duration drain) throws InterruptedException {
    accepting = false;
    long deadline = System.nanoTime() + drain.toNanos();
    while (live.get() > 0 && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    inbox.add(new EngineMessage.AbortAll(503, "the server shut down before the request finished"));
    inbox.add(new EngineMessage.Stop());
    thread.join();
  }

  private void run() {
    while (!stopped) {
      try {
        EngineMessage m = scheduler.canStep() ? inbox.poll() : inbox.poll(50, TimeUnit.MILLISECONDS);
        while (m != null) {
          handle(m);
          m = inbox.poll();
        }
        blocks.finishLoads();
        if (scheduler.hasWork()) {
          step();
        }
        publishGauges();
        boolean wasIdle = idle;
        idle = !scheduler.hasWork() && inbox.isEmpty() && requests.isEmpty()
            && !blocks.loadsInFlight();
        if (idle && !wasIdle) {
          checkWhenIdle();
        }
        idleTrim.observe(idle);
        idleCompact.observe(idle);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (RuntimeException e) {
        // a bug in the engine itself: fail what is running, keep serving
        LOG.log(Level.SEVERE, "engine loop failed", e);
        failAll(500, "internal engine error: " + e);
      }
    }
  }

  private void handle(EngineMessage m) {
    switch (m) {
      case EngineMessage.Submit s -> scheduler.enqueue(outputs.newRequest(s.request(), s.arrivalNanos()));
      case EngineMessage.Abort a -> {
        RequestState state = requests.get(a.requestId());
        if (state != null) {
          drop(state, FinishReason.ABORT);
        }
      }
      case EngineMessage.FinishChoice f -> {
        RequestState state = requests.get(f.requestId());
        if (state != null) {
          outputs.finishChoice(state, f.choice());
        }
      }
      case EngineMessage.AbortAll a -> failAll(a.httpStatus(), a.message());
      case EngineMessage.ResetPrefixCache r -> r.freedBlocks().complete(blocks.resetCache());
      case EngineMessage.Inspect i -> i.snapshot().complete(snapshot());
      case EngineMessage.Run r -> r.task().run();
      case EngineMessage.Stop s -> {
        stopped = true;
        if (loader != null) { // a load in flight reads a few MB: let it finish, then take it back
          loader.shutdown();
          try {
            loader.awaitTermination(10, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          blocks.finishLoads();
        }
      }
    }
  }

  private void step() {
    ScheduledStep step = scheduler.schedule();
    for (Sequence s : scheduler.takeNeverAdmissible()) {
      // validation refuses such requests with 400; reaching this is a validation gap, and
      // still only this request is at fault: the others keep their place
      LOG.warning(() -> "request " + s.request.id() + " can never be admitted: " + s);
      fail(s.state, 400, "the request needs more KV blocks or sequence slots than the server has"
          + " (pool of " + blocks.totalBlocks() + " blocks)");
    }
    if (step.isEmpty()) {
      return;
    }
    float[][] logits;
    try {
      long start = System.nanoTime();
      logits = runner.forwardReusingRows(step.toBatch());
      if (step.decodesOnly()) { // a prefill chunk's tokens cost less: one logits row for many
        speculator.stepTook(step.totalTokens(), System.nanoTime() - start);
      }
    } catch (RuntimeException e) {
      Set<RequestState> failed = new HashSet<>();
      step.chunks().forEach(c -> failed.add(c.seq().state));
      LOG.log(Level.SEVERE, "forward failed for requests "
          + failed.stream().map(r -> r.request.id()).toList(), e);
      failed.forEach(r -> fail(r, 500, "model forward failed: " + e.getMessage()));
      return;
    }
    outputs.process(step, logits);
    // a token just sampled is the next step's input: its embedding row is read ahead now, while
    // the step's output goes out, rather than from the disk inside that step (RowPrefetch)
    for (ScheduledStep.Chunk c : step.chunks()) {
      Sequence s = c.seq();
      if (s.length() == s.numComputed + 1 && s.state.live.contains(s)) {
        runner.prefetchRows(s.tokensArray(), s.numComputed, s.length());
      }
    }
  }

  private void fail(RequestState state, int status, String message) {
    drop(state, status == 500 ? FinishReason.ERROR : FinishReason.ABORT);
    state.request.sink().onError(status, message);
  }

  private void failAll(int status, String message) {
    for (RequestState state : List.copyOf(requests.values())) {
      fail(state, status, message);
    }
  }

  private void drop(RequestState state, FinishReason reason) {
    if (!state.admitted) {
      queued.decrementAndGet();
      state.admitted = true; // counted out of the queue exactly once
    }
    outputs.drop(state, reason);
  }

  private void publishGauges() {
    int waitingRequests = 0;
    for (RequestState r : requests.values()) {
      if (!r.admitted) {
        waitingRequests++;
      }
    }
    gauges = new EngineGauges(requests.size() - waitingRequests, waitingRequests,
        blocks.totalBlocks(), blocks.freeBlocks(), cache.map(PrefixCache::cachedBlocks).orElse(0),
        cache.map(PrefixCache::evictableBlocks).orElse(0),
        ClientLoads.top(scheduler.running(), scheduler.waiting(), EngineGauges.TOP_CLIENTS));
  }

  /**
   * Each time the engine runs dry, every block must be free or cached and unlocked and the cache
   * must pass its integrity check (mini-sglang's check-when-idle): a leak or a broken invariant is
   * logged with its numbers when it happens, not found later as an exhausted pool.
   */
  private void checkWhenIdle() {
    EngineSnapshot s = snapshot();
    if (s.integrityError() != null || !s.quiescent()) {
      LOG.severe("KV accounting broken with no request left: " + s);
    }
  }

  private EngineSnapshot snapshot() {
    List<Sequence> live = new ArrayList<>();
    for (RequestState r : requests.values()) {
      live.addAll(r.live);
    }
    return blocks.snapshot(live, scheduler.running().size(), scheduler.waiting().size());
  }

  /** Counts requests out of the waiting queue at their first admission. */
  private record QueueCountingObserver(EngineObserver delegate, AtomicInteger queued,
      AtomicInteger live)
      implements EngineObserver {
    @Override
    public void admitted(long queueNanos, int queriedTokens, int hitTokens) {
      queued.decrementAndGet();
      delegate.admitted(queueNanos, queriedTokens, hitTokens);
    }

    @Override
    public void promptTokensComputed(int tokens) {
      delegate.promptTokensComputed(tokens);
    }

    @Override
    public void firstToken(long sinceArrivalNanos) {
      delegate.firstToken(sinceArrivalNanos);
    }

    @Override
    public void interToken(long nanos) {
      delegate.interToken(nanos);
    }

    @Override
    public void tokensGenerated(int tokens) {
      delegate.tokensGenerated(tokens);
    }

    @Override
    public void finished(FinishReason reason, long sinceArrivalNanos) {
      live.decrementAndGet();
      delegate.finished(reason, sinceArrivalNanos);
    }

    @Override
    public void preempted() {
      delegate.preempted();
    }

    @Override
    public void fairSharePreempted() {
      delegate.fairSharePreempted();
    }

    @Override
    public void fairShareDeferred() {
      delegate.fairShareDeferred();
    }

    @Override
    public void evicted(int blocks) {
      delegate.evicted(blocks);
    }

    @Override
    public void speculated(int drafted, int accepted) {
      delegate.speculated(drafted, accepted);
    }

    @Override
    public void prefixMatched(String requestId, int choice, String namespace, long nodeId,
        int matchedTokens, int queriedTokens) {
      delegate.prefixMatched(requestId, choice, namespace, nodeId, matchedTokens, queriedTokens);
    }
  }
}
