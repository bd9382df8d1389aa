package dev.radixserve.server.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.radixserve.cache.BlockPool;
import dev.radixserve.cache.EvictionPolicy;
import dev.radixserve.cache.PrefixCache;
import dev.radixserve.cache.RadixCache;
import dev.radixserve.model.ForwardBatch;
import dev.radixserve.model.Tokenizer;
import dev.radixserve.model.sampling.LogitsSampler;
import dev.radixserve.model.sampling.SamplingParams;
import dev.radixserve.model.tokenizer.TokenizerLoader;
import dev.radixserve.server.config.SchedulePolicy;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Scheduler, blocks and output processing driven one step at a time, as the engine thread does,
 * over any model: a fake one for scheduler tests, the real runner for end-to-end KV checks.
 */
class EngineHarness {

  static final Tokenizer TOKENIZER = TokenizerLoader.standard();

  /** Computes a step: one row of logits per chunk. */
  interface Forward {
    float[][] run(ScheduledStep step, ForwardBatch batch);
  }

  /** Fake model: the next token is always (last new token + 1) mod 1000. */
  static final Forward FAKE = (step, batch) -> {
    float[][] out = new float[step.chunks().size()][TOKENIZER.vocabSize()];
    for (int k = 0; k < out.length; k++) {
      Sequence s = step.chunks().get(k).seq();
      int last = s.token(s.numComputed + step.chunks().get(k).tokens() - 1);
      out[k][(last + 1) % 1000] = 10;
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
  final List<String> finished = new ArrayList<>();
  final Map<String, RequestUsage> usage = new HashMap<>();
  /** Sampled tokens by {@code id#choice}. */
  final Map<String, List<Integer>> tokens = new HashMap<>();
  int preemptions;
  /** The batch and logits of the last step. */
  ForwardBatch lastBatch;
  float[][] lastLogits;
  private final Forward forward;
  private final Map<String, RequestState> requests = new HashMap<>();

  EngineHarness(int blocks, int blockSize, boolean caching, SchedulePolicy policy,
      int maxBatchedTokens, int vocabSize, Forward forward) {
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
    };
    SequenceBlocks sb = new SequenceBlocks(new PoolBlocks(pool),
        caching ? Optional.<PrefixCache>of(cache) : Optional.empty(), blockSize, observer);
    scheduler = new Scheduler(sb, policy, 8, maxBatchedTokens, observer);
    outputs = new OutputProcessor(scheduler, sb, p -> new LogitsSampler(p, vocabSize), TOKENIZER,
        observer, requests);
  }

  Sequence submit(String id, int[] prompt, int n, int maxTokens) {
    EngineRequest r = new EngineRequest(id, prompt, SamplingParams.greedy(), n, maxTokens,
        List.of(), true, "", new TokenSink() {
          @Override
          public void onOutput(ChoiceOutput output) {
            output.tokens().forEach(t -> tokens.computeIfAbsent(id + "#" + output.choice(),
                k -> new ArrayList<>()).add(t.tokenId()));
          }

          @Override
          public void onComplete(RequestUsage u) {
            finished.add(id);
            usage.put(id, u);
          }

          @Override
          public void onError(int httpStatus, String message) {}
        });
    Sequence s = outputs.newRequest(r, 0);
    scheduler.enqueue(s);
    return s;
  }

  ScheduledStep step() {
    ScheduledStep step = scheduler.schedule();
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

  /** Drops a request as the engine does on abort ({@code ABORT}) or failure ({@code ERROR}). */
  void drop(String id, FinishReason reason) {
    outputs.drop(requests.get(id), reason);
  }

  /** Every block is free, cached or held by exactly one running owner; nothing is locked idle. */
  void assertAccounting() {
    Set<Integer> inUse = new HashSet<>();
    for (RequestState r : requests.values()) {
      for (Sequence s : r.live) {
        for (int b : s.ownedBlocks()) {
          assertEquals(true, inUse.add(b), "block " + b + " owned twice");
        }
        if (s.hold != null) {
          for (int b : s.hold.privateBlocks()) {
            inUse.add(b);
          }
        }
      }
    }
    int cached = cache.cachedBlocks();
    assertEquals(pool.total(), pool.freeCount() + cached + inUse.size(),
        "free + cached + in use");
    cache.checkIntegrity(inUse.size());
    if (requests.isEmpty()) {
      assertEquals(0, cache.protectedBlocks(), "locks left when idle");
      assertEquals(pool.total(), pool.freeCount() + cached, "blocks left in use when idle");
    }
  }
}
