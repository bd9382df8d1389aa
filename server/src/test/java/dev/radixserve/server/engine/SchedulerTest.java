package dev.radixserve.server.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.model.ForwardBatch;
import dev.radixserve.model.sampling.SampledToken;
import dev.radixserve.server.config.SchedulePolicy;
import java.util.ArrayList;
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

    /** @param modelVocab logits per row: the tokenizer's vocabulary, or more when padded */
    Harness(int blocks, SchedulePolicy policy, int maxTokens, int modelVocab) {
      super(blocks, B, true, policy, maxTokens, modelVocab, FAKE);
    }

    /** @param prefillChunk most prompt tokens a sequence computes in one step */
    Harness(int blocks, SchedulePolicy policy, int maxTokens, int modelVocab, int prefillChunk) {
      super(blocks, B, true, policy, maxTokens, modelVocab, prefillChunk, FAKE);
    }
  }

  private static int[] tokens(int from, int count) {
    return IntStream.range(from, from + count).toArray();
  }

  @Test
  void promptLogprobsTakeEveryRowOfTheirChunksBesideOtherSequences() {
    Harness h = new Harness(64, SchedulePolicy.FCFS, 20);
    h.submit("plain", tokens(500, 10), 1, 5);
    h.step();
    h.submit("warm", tokens(100, 40), 1, 1);
    while (h.scheduler.hasWork()) {
      h.step(); // caches "warm"'s prompt blocks
    }
    h.sampled.clear();
    h.submit("plain2", tokens(700, 3), 1, 6);
    h.step();
    Sequence scored = h.submit("scored", tokens(100, 40), 1, 2, true);
    List<Integer> chunkTokens = new ArrayList<>();
    while (h.scheduler.hasWork()) {
      ScheduledStep step = h.step();
      step.chunks().stream().filter(c -> c.seq() == scored).forEach(c -> chunkTokens.add(c.tokens()));
    }
    // behind plain2's decode: 19 + 19 + 2 prompt tokens, none from the cache, then a decode
    assertEquals(List.of(19, 19, 2, 1), chunkTokens);
    assertEquals(0, scored.state.cachedTokens);
    List<SampledToken> lp = h.scored.get("scored");
    assertEquals(39, lp.size());
    double logprob = 10 - Math.log(Math.exp(10) + EngineHarness.TOKENIZER.vocabSize() - 1);
    for (int i = 0; i < lp.size(); i++) {
      assertEquals(101 + i, lp.get(i).tokenId());
      assertEquals(logprob, lp.get(i).logprob(), 1e-5, "prompt token " + (i + 1));
    }
    // each sequence read its own row: plain2 decodes beside every chunk of "scored"
    assertEquals(List.of(703, 704, 705, 706, 140, 707, 141, 708), h.sampled);
    h.assertAccounting();
  }

  @Test
  void onlyStepsWithoutPromptTokensPriceDrafts() {
    Harness h = new Harness(64, SchedulePolicy.FCFS, 20);
    h.submit("first", tokens(500, 10), 1, 5);
    assertFalse(h.step().decodesOnly()); // its prompt
    assertTrue(h.step().decodesOnly()); // its first decode
    h.submit("second", tokens(700, 10), 1, 5);
    assertFalse(h.step().decodesOnly()); // a decode beside a prompt
    assertTrue(h.step().decodesOnly()); // two decodes
    while (h.scheduler.hasWork()) {
      h.step();
    }
    h.assertAccounting();
  }

  @Test
  void idsPastTheTokenizerAreNeverSampled() {
    Harness h = new Harness(16, SchedulePolicy.FCFS, 64, EngineHarness.TOKENIZER.vocabSize() + 47); // padded
    h.submit("padded", tokens(100, 5), 1, 1);
    float[] row = new float[EngineHarness.TOKENIZER.vocabSize() + 47];
    row[EngineHarness.TOKENIZER.vocabSize() + 3] = 100;
    row[42] = 5;
    h.outputs.process(h.scheduler.schedule(), new float[][] {row});
    assertEquals(List.of(42), h.sampled);
    assertEquals(List.of("padded"), h.finished);
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
  void requestsArrivingTogetherWithAnUncachedPromptComputeItOnceUnderLpm() {
    for (SchedulePolicy policy : SchedulePolicy.values()) {
      // at most 32 prompt tokens a sequence a step: "a"'s 81 take three steps
      Harness h = new Harness(64, policy, 256, EngineHarness.TOKENIZER.vocabSize(), 32);
      int[] shared = tokens(100, 80);
      Sequence a = h.submit("a", IntStream.concat(IntStream.of(shared), IntStream.of(900)).toArray(), 1, 2);
      Sequence b = h.submit("b", IntStream.concat(IntStream.of(shared), IntStream.of(901)).toArray(), 1, 2);
      Sequence other = h.submit("other", tokens(2000, 20), 1, 2);
      java.util.Map<String, Integer> computed = new java.util.HashMap<>();
      List<List<String>> order = new ArrayList<>();
      while (h.scheduler.hasWork()) {
        ScheduledStep step = h.step();
        order.add(ids(step));
        step.chunks().forEach(c -> computed.merge(c.seq().request.id(), c.tokens(), Integer::sum));
      }
      assertEquals(List.of("a", "b", "other"), h.finished.stream().sorted().toList());
      assertEquals(82, computed.get("a")); // its prompt and one decode
      assertEquals(21, computed.get("other")); // unrelated: admitted in the first step
      assertTrue(order.getFirst().contains("other"), policy.name());
      if (policy == SchedulePolicy.LPM) {
        // "b" waits while "a" computes the shared 80 tokens, then takes them from the cache
        assertEquals(List.of(List.of("a", "other"), List.of("a", "other"), List.of("a"),
            List.of("a", "b"), List.of("b")), order);
        assertEquals(80, b.state.cachedTokens);
        assertEquals(2, computed.get("b"));
      } else {
        assertEquals(0, b.state.cachedTokens); // FCFS: admitted at once, computes them again
        assertEquals(82, computed.get("b"));
      }
      assertEquals(0, a.state.cachedTokens);
      assertEquals(0, other.state.cachedTokens);
      h.assertAccounting();
    }
  }

  @Test
  void aRequestThatNeedsItsPromptLogitsNeverWaitsForAPrefillItCannotReuse() {
    Harness h = new Harness(64, SchedulePolicy.LPM, 256, EngineHarness.TOKENIZER.vocabSize(), 32);
    int[] shared = tokens(100, 80);
    h.submit("a", IntStream.concat(IntStream.of(shared), IntStream.of(900)).toArray(), 1, 2);
    Sequence scored = h.submit("scored",
        IntStream.concat(IntStream.of(shared), IntStream.of(901)).toArray(), 1, 2, true);
    assertEquals(List.of("a", "scored"), ids(h.step())); // it reads no cache: nothing to wait for
    while (h.scheduler.hasWork()) {
      h.step();
    }
    assertEquals(0, scored.state.cachedTokens);
    h.assertAccounting();
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

  private static List<String> ids(ScheduledStep step) {
    return step.chunks().stream().map(c -> c.seq().request.id()).toList();
  }

  private static List<Integer> sizes(ScheduledStep step) {
    return step.chunks().stream().map(ScheduledStep.Chunk::tokens).toList();
  }

  @Test
  void prefillChunksBoundHowLongAShortRequestWaitsBehindALongPrompt() {
    // budget 256 tokens a step, at most 64 prompt tokens per sequence a step
    Harness h = new Harness(128, SchedulePolicy.FCFS, 256, EngineHarness.TOKENIZER.vocabSize(), 64);
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
  void withoutFairSharesALateRequestWaitsForAFreeSlotThenGoesFirst() {
    for (SchedulePolicy policy : SchedulePolicy.values()) {
      EngineHarness h = new EngineHarness(256, B, true, policy, 1024,
          EngineHarness.TOKENIZER.vocabSize(), Integer.MAX_VALUE, EngineHarness.FAKE, 8,
          new Engine.FairShareSettings(false, 8));
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
