package dev.radixserve.server.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.cache.BlockPool;
import dev.radixserve.cache.EvictionPolicy;
import dev.radixserve.cache.PrefixCache;
import dev.radixserve.cache.RadixCache;
import dev.radixserve.model.ForwardBatch;
import dev.radixserve.model.Tokenizer;
import dev.radixserve.model.sampling.LogitsSampler;
import dev.radixserve.model.sampling.SampledToken;
import dev.radixserve.model.sampling.SamplingParams;
import dev.radixserve.model.tokenizer.TokenizerLoader;
import dev.radixserve.server.config.SchedulePolicy;
import dev.radixserve.server.spec.DraftSource;
import dev.radixserve.server.spec.RadixDraftIndex;
import dev.radixserve.server.spec.Speculation;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.function.Function;

/**
 * Scheduler, blocks and output processing driven one step at a time, as the engine thread does,
 * over any model: a fake one for scheduler tests, the real runner for end-to-end KV checks.
 */
class EngineHarness {

  static final Tokenizer TOKENIZER = TokenizerLoader.standard();

  /** Computes a step: the runner's rows, one per chunk or one per token of an all-logits chunk. */
  interface Forward {
    float[][] run(ScheduledStep step, ForwardBatch batch);
  }

  /**
   * Fake model: the next token is always (token + 1) mod 1000. One row per chunk (its last
   * token), or one per token of an all-logits chunk, as the runner returns them.
   */
  static final Forward FAKE = (step, batch) -> {
    float[][] out = new float[batch.logitRows()][TOKENIZER.vocabSize()];
    for (int k = 0; k < step.chunks().size(); k++) {
      ScheduledStep.Chunk c = step.chunks().get(k);
      Sequence s = c.seq();
      int end = s.numComputed + c.tokens();
      for (int row = batch.firstRow(k); row <= batch.lastRow(k); row++) {
        int position = end - 1 - (batch.lastRow(k) - row);
        out[row][(s.token(position) + 1) % 1000] = 10;
      }
    }
    return out;
  };

  final int blockSize;
  final BlockPool pool;
  /** The engine's prefix cache; unused (always empty) with caching off. */
  final RadixCache cache;
  final boolean caching;
  final Scheduler scheduler;
  final OutputProcessor outputs;
  final SequenceBlocks sb;
  final List<String> finished = new ArrayList<>();
  final Map<String, RequestUsage> usage = new HashMap<>();
  /** Sampled tokens by {@code id#choice}. */
  final Map<String, List<Integer>> tokens = new HashMap<>();
  /** Every sampled token, in the order the sinks saw them. */
  final List<Integer> sampled = new ArrayList<>();
  /** Prompt logprobs by request id. */
  final Map<String, List<SampledToken>> scored = new HashMap<>();
  /** Request ids in the order their sequences were admitted (again after a preemption too). */
  final List<String> admissions = new ArrayList<>();
  /** Runs between a step's schedule and its forward (to check what was scheduled). */
  Runnable afterSchedule = () -> {};
  int preemptions;
  /** Asked for drafts before the built-in sources (speculative decoding); none by default. */
  DraftSource firstDrafts = (tokens, length, max) -> DraftSource.NONE;
  /** Draft tokens verified, and of those accepted (speculative decoding). */
  int drafted;
  int accepted;
  int fairSharePreemptions;
  int deferrals;
  /** The batch and logits of the last step. */
  ForwardBatch lastBatch;
  float[][] lastLogits;
  private final Forward forward;
  private final Map<String, RequestState> requests = new HashMap<>();

  EngineHarness(int blocks, int blockSize, boolean caching, SchedulePolicy policy,
      int maxBatchedTokens, int vocabSize, Forward forward) {
    this(blocks, blockSize, caching, policy, maxBatchedTokens, vocabSize, Integer.MAX_VALUE,
        forward);
  }

  /**
   * @param vocabSize logits per row: the tokenizer's vocabulary, or more when padded
   * @param prefillChunk most prompt tokens a sequence computes in one step
   */
  EngineHarness(int blocks, int blockSize, boolean caching, SchedulePolicy policy,
      int maxBatchedTokens, int vocabSize, int prefillChunk, Forward forward) {
    this(blocks, blockSize, caching, policy, maxBatchedTokens, vocabSize, prefillChunk, forward,
        8, new Engine.FairShareSettings(true, 2), null, Runnable::run, Speculation.off());
  }

  /**
   * @param maxNumSeqs sequence slots
   * @param fairShare fair shares between clients, on or off
   */
  EngineHarness(int blocks, int blockSize, boolean caching, SchedulePolicy policy,
      int maxBatchedTokens, int vocabSize, int prefillChunk, Forward forward, int maxNumSeqs,
      Engine.FairShareSettings fairShare) {
    this(blocks, blockSize, caching, policy, maxBatchedTokens, vocabSize, prefillChunk, forward,
        maxNumSeqs, fairShare, null, Runnable::run, Speculation.off());
  }

  /**
   * @param tiers the cache tiers below the pool, listening to {@link #cache} once the harness
   *     is built (null: none)
   * @param loader runs their loads ({@code Runnable::run}: within the step that starts them)
   */
  EngineHarness(int blocks, int blockSize, boolean caching, SchedulePolicy policy,
      int maxBatchedTokens, int vocabSize, int prefillChunk, Forward forward,
      Function<RadixCache, BlockTiers> tiers, Executor loader) {
    this(blocks, blockSize, caching, policy, maxBatchedTokens, vocabSize, prefillChunk, forward,
        8, new Engine.FairShareSettings(true, 2), tiers, loader, Speculation.off());
  }

  /**
   * An FCFS harness whose decoding sequences verify drafts (speculative decoding), from their own
   * tokens and, with caching on, from {@link #cache}'s token runs.
   */
  static EngineHarness speculative(int blocks, int blockSize, boolean caching,
      int maxBatchedTokens, int vocabSize, Forward forward, Speculation speculation) {
    return new EngineHarness(blocks, blockSize, caching, SchedulePolicy.FCFS, maxBatchedTokens,
        vocabSize, Integer.MAX_VALUE, forward, 8, new Engine.FairShareSettings(true, 2), null,
        Runnable::run, speculation);
  }

  /**
   * A caching FCFS harness over a real runner's pool with {@code tiers} listening to its cache
   * and loading within the step that starts a load (the tier tests' set-up).
   */
  static EngineHarness withTiers(int blocks, int blockSize, int vocabSize, Forward forward,
      dev.radixserve.server.kvtier.KvTiers tiers) {
    return new EngineHarness(blocks, blockSize, true, SchedulePolicy.FCFS, 64, vocabSize,
        Integer.MAX_VALUE, forward, cache -> {
          cache.addListener(tiers);
          return tiers;
        }, Runnable::run);
  }

  private EngineHarness(int blocks, int blockSize, boolean caching, SchedulePolicy policy,
      int maxBatchedTokens, int vocabSize, int prefillChunk, Forward forward, int maxNumSeqs,
      Engine.FairShareSettings fairShare, Function<RadixCache, BlockTiers> tiers,
      Executor loader, Speculation speculation) {
    this.blockSize = blockSize;
    this.forward = forward;
    this.caching = caching;
    pool = new BlockPool(blocks);
    cache = new RadixCache(pool, blockSize, EvictionPolicy.lru());
    EngineObserver observer = new EngineObserver() {
      @Override
      public void preempted() {
        preemptions++;
      }

      @Override
      public void prefixMatched(String requestId, int choice, String namespace, long nodeId,
          int matchedTokens, int queriedTokens) {
        admissions.add(requestId);
      }

      @Override
      public void fairSharePreempted() {
        fairSharePreemptions++;
      }

      @Override
      public void fairShareDeferred() {
        deferrals++;
      }

      @Override
      public void speculated(int draftedTokens, int acceptedTokens) {
        drafted += draftedTokens;
        accepted += acceptedTokens;
      }
    };
    BlockTiers below = tiers == null ? null : tiers.apply(cache);
    sb = new SequenceBlocks(pool,
        caching ? Optional.<PrefixCache>of(cache) : Optional.empty(), blockSize, observer,
        Optional.ofNullable(below), below == null ? null : new TierLoads(loader, () -> { }));
    Optional<RadixDraftIndex> index = Optional.empty();
    if (caching && speculation.enabled()) {
      index = Optional.of(new RadixDraftIndex(blockSize, speculation.maxTokens(), 1 << 12));
      cache.addListener(index.get());
    }
    Speculator speculator = new Speculator(speculation,
        Optional.of((tokens, length, max) -> firstDrafts.propose(tokens, length, max)), true,
        index, observer);
    scheduler = new Scheduler(sb, policy, maxNumSeqs, maxBatchedTokens, prefillChunk, fairShare,
        observer, speculator);
    outputs = new OutputProcessor(scheduler, sb, p -> new LogitsSampler(p, vocabSize), TOKENIZER,
        Set.of(TOKENIZER.eosTokenId()), observer, requests, speculator);
  }

  Sequence submit(String id, int[] prompt, int n, int maxTokens) {
    return submit(id, id, prompt, n, maxTokens, false);
  }

  Sequence submit(String id, int[] prompt, int n, int maxTokens, boolean promptLogprobs) {
    return submit(id, id, prompt, n, maxTokens, promptLogprobs);
  }

  Sequence submit(String id, String group, int[] prompt, int n, int maxTokens) {
    return submit(id, group, prompt, n, maxTokens, false);
  }

  Sequence submit(String id, String group, int[] prompt, int n, int maxTokens,
      boolean promptLogprobs) {
    return submit(id, group, group, 0, prompt, n, maxTokens, promptLogprobs);
  }

  /** A prompt of request {@code group} from {@code client} at {@code priority}. */
  Sequence submit(String id, String group, String client, int priority, int[] prompt, int n,
      int maxTokens, boolean promptLogprobs) {
    return submit(id, group, client, priority, prompt, n, maxTokens, promptLogprobs,
        SamplingParams.greedy());
  }

  /** A request of its own, sampled with {@code params}. */
  Sequence submit(String id, int[] prompt, int n, int maxTokens, SamplingParams params) {
    return submit(id, id, id, 0, prompt, n, maxTokens, false, params);
  }

  private Sequence submit(String id, String group, String client, int priority, int[] prompt,
      int n, int maxTokens, boolean promptLogprobs, SamplingParams params) {
    EngineRequest r = new EngineRequest(id, group, prompt, params, n, maxTokens,
        true, "", new TokenSink() {
          @Override
          public void onPromptLogprobs(List<SampledToken> scoredTokens) {
            scored.put(id, scoredTokens);
          }

          @Override
          public void onOutput(ChoiceOutput output) {
            output.tokens().forEach(t -> {
              sampled.add(t.tokenId());
              tokens.computeIfAbsent(id + "#" + output.choice(), k -> new ArrayList<>())
                  .add(t.tokenId());
            });
          }

          @Override
          public void onComplete(RequestUsage u) {
            finished.add(id);
            usage.put(id, u);
          }

          @Override
          public void onError(int httpStatus, String message) {}
        }, promptLogprobs, client, priority);
    Sequence s = outputs.newRequest(r, 0);
    scheduler.enqueue(s);
    return s;
  }

  ScheduledStep step() {
    ScheduledStep step = scheduler.schedule();
    afterSchedule.run();
    if (!step.isEmpty()) {
      lastBatch = step.toBatch();
      lastLogits = forward.run(step, lastBatch);
      outputs.process(step, lastLogits);
    }
    return step;
  }

  void runToCompletion() {
    for (int i = 0; i < 10_000 && scheduler.hasWork(); i++) {
      step();
      assertAccounting();
    }
    assertEquals(false, scheduler.hasWork(), "still working after 10,000 steps");
  }

  /** Live request ids, in no particular order. */
  List<String> liveRequests() {
    return new ArrayList<>(requests.keySet());
  }

  /** Drops a request as the engine does on abort ({@code ABORT}) or failure ({@code ERROR}). */
  void drop(String id, FinishReason reason) {
    outputs.drop(requests.get(id), reason);
  }

  /**
   * Every block is free, cached or held by exactly one running owner (SequenceBlocks' one check of
   * DESIGN.md's block invariants); nothing is locked or in use when idle.
   */
  void assertAccounting() {
    List<Sequence> live = new ArrayList<>();
    for (RequestState r : requests.values()) {
      live.addAll(r.live);
    }
    EngineSnapshot s = sb.snapshot(live, scheduler.running().size(),
        scheduler.waiting().size());
    assertNull(s.integrityError(), s.toString());
    if (requests.isEmpty() && !sb.loadsInFlight()) { // a cancelled load keeps its lock till done
      assertTrue(s.quiescent(), "locks or blocks left when idle: " + s);
    }
  }
}
