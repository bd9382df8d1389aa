package dev.radixserve.server.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.cache.BlockPool;
import dev.radixserve.cache.PrefixCache;
import dev.radixserve.cache.RadixCache;
import dev.radixserve.model.Tokenizer;
import dev.radixserve.model.sampling.SamplingParams;
import dev.radixserve.model.sampling.LogitsSampler;
import dev.radixserve.model.tokenizer.TokenizerLoader;
import dev.radixserve.server.config.SchedulePolicy;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Optional;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** Scheduler, blocks and output processing driven step by step with a fake model. */
class SchedulerTest {

  private static final Tokenizer TOKENIZER = TokenizerLoader.standard();
  private static final int B = 16;

  /** Fake model: the next token is always (last new token + 1) mod 1000. */
  private static float[][] fakeForward(ScheduledStep step) {
    float[][] out = new float[step.chunks().size()][TOKENIZER.vocabSize()];
    for (int k = 0; k < out.length; k++) {
      Sequence s = step.chunks().get(k).seq();
      int last = s.token(s.numComputed + step.chunks().get(k).tokens() - 1);
      out[k][(last + 1) % 1000] = 10;
    }
    return out;
  }

  private final class Harness {
    final BlockPool pool;
    final RadixCache cache;
    final Scheduler scheduler;
    final OutputProcessor outputs;
    final List<String> finished = new ArrayList<>();

    Harness(int blocks, SchedulePolicy policy, int maxTokens) {
      this(blocks, policy, maxTokens, Integer.MAX_VALUE);
    }

    Harness(int blocks, SchedulePolicy policy, int maxTokens, int prefillChunk) {
      pool = new BlockPool(blocks);
      cache = new RadixCache(pool);
      SequenceBlocks sb = new SequenceBlocks(new PoolBlocks(pool), Optional.<PrefixCache>of(cache),
          B, EngineObserver.NONE);
      scheduler = new Scheduler(sb, policy, 8, maxTokens, prefillChunk, EngineObserver.NONE);
      outputs = new OutputProcessor(scheduler, sb, p -> new LogitsSampler(p, TOKENIZER.vocabSize()),
          TOKENIZER, EngineObserver.NONE, new HashMap<>());
    }

    Sequence submit(String id, int[] prompt, int n, int maxTokens) {
      return submit(id, id, prompt, n, maxTokens);
    }

    Sequence submit(String id, String group, int[] prompt, int n, int maxTokens) {
      EngineRequest r = new EngineRequest(id, group, prompt, SamplingParams.greedy(), n,
          maxTokens, true, "", new TokenSink() {
            @Override
            public void onOutput(ChoiceOutput output) {}

            @Override
            public void onComplete(RequestUsage usage) {
              finished.add(id);
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
        outputs.process(step, fakeForward(step));
      }
      return step;
    }

    void assertAccounting() {
      int inUse = 0;
      java.util.Set<Integer> seen = new java.util.HashSet<>();
      for (Sequence s : scheduler.running()) {
        for (int b : s.ownedBlocks()) {
          seen.add(b);
        }
      }
      inUse = seen.size();
      assertEquals(pool.total(), pool.freeCount() + cache.cachedBlocks() + inUse);
      cache.checkIntegrity(inUse);
    }
  }

  private static int[] tokens(int from, int count) {
    return IntStream.range(from, from + count).toArray();
  }

  @Test
  void longPromptIsPrefilledInChunksWithinTheBudget() {
    Harness h = new Harness(64, SchedulePolicy.LPM, 32);
    h.submit("a", tokens(100, 80), 1, 2);
    assertEquals(32, h.step().totalTokens());
    assertEquals(32, h.step().totalTokens());
    assertEquals(16, h.step().totalTokens()); // last chunk → first token sampled
    assertEquals(1, h.step().totalTokens()); // decode
    assertEquals(List.of("a"), h.finished);
    h.assertAccounting();
    assertEquals(5, h.cache.cachedBlocks()); // 81 computed tokens → 5 full blocks cached
  }

  @Test
  void lpmAdmitsTheLongestCachedPrefixFirstAndFcfsByArrival() {
    for (SchedulePolicy policy : SchedulePolicy.values()) {
      Harness h = new Harness(64, policy, 48);
      h.submit("warm", tokens(100, 48), 1, 1);
      h.step();
      assertEquals(List.of("warm"), h.finished);
      h.submit("other", tokens(500, 40), 1, 1);
      Sequence hit = h.submit("hit", tokens(100, 40), 1, 1);
      ScheduledStep step = h.step();
      String first = step.chunks().getFirst().seq().request.id();
      assertEquals(policy == SchedulePolicy.LPM ? "hit" : "other", first, policy.name());
      if (policy == SchedulePolicy.LPM) {
        assertEquals(8, step.chunks().getFirst().tokens()); // 32 of 40 tokens came from the cache
        assertTrue(h.finished.contains("hit") && hit.outputTokens == 1);
      }
      while (h.scheduler.hasWork()) {
        h.step();
      }
      h.assertAccounting();
    }
  }

  @Test
  void preemptsTheNewestWhenBlocksRunOutAndStillFinishesEveryRequest() {
    Harness h = new Harness(6, SchedulePolicy.FCFS, 256);
    h.submit("a", tokens(100, 30), 1, 30); // needs up to 4 blocks
    h.submit("b", tokens(300, 30), 1, 30);
    h.step(); // both admitted: 2 blocks each
    assertEquals(2, h.scheduler.running().size());
    int steps = 0;
    boolean preempted = false;
    while (h.scheduler.hasWork() && steps++ < 500) {
      h.step();
      preempted |= h.scheduler.running().size() == 1 && h.scheduler.waiting().size() == 1
          && h.scheduler.waiting().peekFirst().request.id().equals("b");
      h.assertAccounting();
    }
    assertTrue(preempted, "b (newest) was preempted");
    assertEquals(List.of("a", "b"), h.finished);
    assertEquals(0, h.cache.protectedBlocks());
  }

  @Test
  void nChoicesForkAfterOnePrefillAndShareThePromptBlocks() {
    Harness h = new Harness(64, SchedulePolicy.LPM, 256);
    h.submit("n3", tokens(100, 40), 3, 4);
    ScheduledStep prefill = h.step();
    assertEquals(40, prefill.totalTokens()); // the prompt once
    List<Sequence> running = h.scheduler.running();
    assertEquals(3, running.size());
    int[] shared = java.util.Arrays.copyOf(running.get(0).blockTable(), 2);
    for (Sequence s : running) {
      assertArrayEquals(shared, java.util.Arrays.copyOf(s.blockTable(), 2));
    }
    // children recompute only the partial last block (8 tokens) plus their first token
    ScheduledStep next = h.step();
    assertEquals(List.of(1, 9, 9), next.chunks().stream().map(ScheduledStep.Chunk::tokens).toList());
    while (h.scheduler.hasWork()) {
      h.step();
    }
    assertEquals(List.of("n3"), h.finished);
    h.assertAccounting();
  }

  private static List<String> ids(ScheduledStep step) {
    return step.chunks().stream().map(c -> c.seq().request.id()).toList();
  }

  private static List<Integer> sizes(ScheduledStep step) {
    return step.chunks().stream().map(ScheduledStep.Chunk::tokens).toList();
  }

  @Test
  void prefillChunksBoundHowLongAShortRequestWaitsBehindALongPrompt() {
    // budget 256 tokens a step, at most 64 prompt tokens per sequence a step
    Harness h = new Harness(128, SchedulePolicy.FCFS, 256, 64);
    h.submit("long", tokens(100, 700), 1, 3);
    assertEquals(List.of(64), sizes(h.step()));
    h.submit("short", tokens(2000, 2), 1, 1);
    ScheduledStep next = h.step();
    assertEquals(List.of("long", "short"), ids(next)); // admitted in the very next step
    assertEquals(List.of(64, 2), sizes(next));
    assertEquals(List.of("short"), h.finished);
    int steps = 2;
    while (!h.finished.contains("long")) {
      h.step();
      steps++;
    }
    assertEquals(11 + 2, steps); // ceil(700 / 64) prefill steps (the last samples), 2 decodes
    h.assertAccounting();

    // without the cap the long prompt takes the whole budget until its last chunk
    Harness uncapped = new Harness(128, SchedulePolicy.FCFS, 256);
    uncapped.submit("long", tokens(100, 700), 1, 3);
    uncapped.step();
    uncapped.submit("short", tokens(2000, 2), 1, 1);
    assertEquals(List.of("long"), ids(uncapped.step()));
    assertEquals(List.of(188, 2), sizes(uncapped.step()));
  }

  @Test
  void admissionIsFairBetweenRequestsNotOnlyBetweenSequences() {
    for (SchedulePolicy policy : SchedulePolicy.values()) {
      Harness h = new Harness(256, policy, 1024); // 8 sequence slots
      for (int i = 0; i < 20; i++) {
        h.submit("many-" + i, "many", tokens(100 + 10 * i, 4), 1, 20);
      }
      h.step(); // the first 8 prompts of "many" run
      h.submit("one", "one", tokens(5000, 4), 1, 1);
      while (!h.finished.contains("one")) {
        h.step();
      }
      // "one" took the first slot that came free, ahead of the 12 prompts still waiting
      assertEquals(9, h.finished.size(), policy + ": " + h.finished);
      while (h.scheduler.hasWork()) {
        h.step();
      }
      assertEquals(21, h.finished.size());
      h.assertAccounting();
    }
  }

  @Test
  void aSequenceThatCanNeverBeAdmittedIsSetAsideAndTheOthersRun() {
    Harness h = new Harness(8, SchedulePolicy.FCFS, 256); // 8 blocks, 8 sequence slots
    h.submit("too-many-choices", tokens(100, 4), 9, 2);
    h.submit("too-long", tokens(200, 200), 1, 2); // 13 blocks
    h.submit("innocent", tokens(300, 4), 1, 2);
    assertEquals(List.of("innocent"), ids(h.step()));
    List<Sequence> refused = h.scheduler.takeNeverAdmissible();
    assertEquals(List.of("too-many-choices", "too-long"),
        refused.stream().map(s -> s.request.id()).toList());
    refused.forEach(s -> h.outputs.drop(s.state, FinishReason.ABORT)); // as Engine.step does
    while (h.scheduler.hasWork()) {
      h.step();
    }
    assertEquals(List.of("innocent"), h.finished);
    assertEquals(List.of(), h.scheduler.takeNeverAdmissible());
    h.assertAccounting();
  }

  @Test
  void choicesThatTogetherNeedMoreThanThePoolTakeTurnsAndAllFinish() {
    // each choice needs up to 5 blocks; 4 at once would need 17 of the 10
    Harness h = new Harness(10, SchedulePolicy.FCFS, 256);
    h.submit("n4", tokens(100, 16), 4, 64);
    int steps = 0;
    while (h.scheduler.hasWork() && steps++ < 2000) {
      h.step();
      h.assertAccounting();
    }
    assertEquals(List.of("n4"), h.finished);
    assertEquals(List.of(), h.scheduler.takeNeverAdmissible());
  }
}
