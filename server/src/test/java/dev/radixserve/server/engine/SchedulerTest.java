package dev.radixserve.server.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.model.ForwardBatch;
import dev.radixserve.server.config.SchedulePolicy;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** Scheduler, blocks and output processing driven step by step with a fake model. */
class SchedulerTest {

  private static final int B = 16;

  private static final class Harness extends EngineHarness {
    Harness(int blocks, SchedulePolicy policy, int maxTokens) {
      super(blocks, B, true, policy, maxTokens, TOKENIZER.vocabSize(), FAKE);
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
    assertEquals(6, h.cache.cachedBlocks()); // 81 computed tokens → 5 full blocks + 1 token
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
        assertEquals(1, step.chunks().getFirst().tokens()); // 39 of 40 tokens came from the cache
        assertEquals(List.of(new ForwardBatch.BlockCopy(2, 3, 7)), h.lastBatch.copies());
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
    // every choice goes on in its own copy of the prompt's partial last block (8 tokens), which
    // the cache now holds (block 2): each computes only its first token
    ScheduledStep next = h.step();
    assertEquals(List.of(1, 1, 1), next.chunks().stream().map(ScheduledStep.Chunk::tokens).toList());
    assertEquals(List.of(new ForwardBatch.BlockCopy(2, 3, 8), new ForwardBatch.BlockCopy(2, 4, 8),
        new ForwardBatch.BlockCopy(2, 5, 8)), h.lastBatch.copies());
    while (h.scheduler.hasWork()) {
      h.step();
    }
    assertEquals(List.of("n3"), h.finished);
    h.assertAccounting();
  }
}
