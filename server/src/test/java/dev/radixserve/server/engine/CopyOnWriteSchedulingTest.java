package dev.radixserve.server.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.radixserve.model.ForwardBatch.BlockCopy;
import dev.radixserve.server.config.SchedulePolicy;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * Token-granular reuse in the scheduler with a fake model: which copies each step carries, which
 * blocks each sequence holds, and that every block and lock comes back exactly once whatever
 * ends a sequence with a copy still to do (finish, abort, error, preemption). The pool frees a
 * block twice only by throwing, and {@link EngineHarness#assertAccounting} runs after every step.
 */
class CopyOnWriteSchedulingTest {

  private static final int B = 16;

  private static EngineHarness harness(int blocks, boolean caching) {
    return new EngineHarness(blocks, B, caching, SchedulePolicy.LPM, 256,
        EngineHarness.TOKENIZER.vocabSize(), EngineHarness.FAKE);
  }

  private static int[] tokens(int from, int count) {
    return IntStream.range(from, from + count).toArray();
  }

  @Test
  void aRepeatReusesAllButItsLastTokenThroughACopy() {
    EngineHarness h = harness(8, true);
    h.submit("warm", tokens(100, 40), 1, 1); // blocks 0, 1, 2 (8 tokens)
    h.runToCompletion();
    assertEquals(List.of(3), List.of(h.cache.cachedBlocks()));
    Sequence again = h.submit("again", tokens(100, 40), 1, 3);
    ScheduledStep first = h.step();
    assertEquals(1, first.totalTokens()); // token 39 only
    assertEquals(List.of(new BlockCopy(2, 3, 7)), h.lastBatch.copies());
    assertArrayEquals(new int[] {0, 1, 3}, h.lastBatch.seqs().getFirst().blockTable());
    assertNull(again.pendingCopy); // done: the source is unlocked again
    assertEquals(2, again.heldBlocks);
    h.assertAccounting();
    h.runToCompletion();
    assertEquals(39, h.usage.get("again").cachedTokens());
    assertEquals(0, h.usage.get("warm").cachedTokens());
    // "again" went on past the cached partial block in its own block 3: a sibling, 4 blocks
    assertEquals(4, h.cache.cachedBlocks());
  }

  @Test
  void aRunningPromptsPartialBlockServesAConcurrentRequest() {
    EngineHarness h = harness(16, true);
    h.submit("long", tokens(100, 40), 1, 30);
    h.step(); // prefill: the prompt, partial block 2 included, is cached; "long" copies it
    assertEquals(List.of(), h.lastBatch.copies());
    h.submit("branch", IntStream.concat(IntStream.range(100, 140), IntStream.of(7, 8, 9))
        .toArray(), 1, 2);
    h.step();
    assertEquals(List.of(new BlockCopy(2, 3, 8), new BlockCopy(2, 4, 8)), h.lastBatch.copies());
    assertEquals(List.of(1, 3), h.lastBatch.seqs().stream()
        .map(s -> s.newTokens().length).toList()); // "long" decodes; "branch" computes 40..42
    h.runToCompletion();
    assertEquals(40, h.usage.get("branch").cachedTokens());
  }

  @Test
  void forkedChoicesCopyThePartialPromptBlockWithTheCacheOff() {
    EngineHarness h = harness(16, false);
    h.submit("n3", tokens(100, 40), 3, 4);
    h.step();
    h.step();
    // the parent keeps writing its block 2 (slots 8 on), pinned by the shared prompt blocks
    assertEquals(List.of(new BlockCopy(2, 3, 8), new BlockCopy(2, 4, 8)), h.lastBatch.copies());
    assertEquals(List.of(1, 1, 1), h.lastBatch.seqs().stream()
        .map(s -> s.newTokens().length).toList());
    h.runToCompletion();
    assertEquals(List.of("n3"), h.finished);
    assertEquals(h.tokens.get("n3#0"), h.tokens.get("n3#1")); // greedy: the same tokens
    assertEquals(h.tokens.get("n3#0"), h.tokens.get("n3#2"));
  }

  @Test
  void abortAndErrorWithACopyStillToDoGiveEverythingBackOnce() {
    for (FinishReason reason : List.of(FinishReason.ABORT, FinishReason.ERROR)) {
      EngineHarness h = harness(16, true);
      h.submit("warm", tokens(100, 40), 1, 1);
      h.runToCompletion();
      h.submit("n3", tokens(100, 40), 3, 4);
      h.step(); // token 39 into its own copy (block 3), then the fork: the children copy block 2
      List<Sequence> running = List.copyOf(h.scheduler.running());
      assertEquals(3, running.size());
      assertNull(running.get(0).pendingCopy); // the cache had the prompt: the parent keeps 3
      assertEquals(2, running.get(1).pendingCopy.sourceBlock());
      assertEquals(8, running.get(2).pendingCopy.slots());
      assertEquals(3, h.cache.protectedBlocks()); // whole blocks 0, 1 + the copy source 2
      h.drop("n3", reason);
      assertEquals(List.of(), h.scheduler.running());
      assertEquals(0, h.cache.protectedBlocks(), reason.name());
      running.forEach(s -> assertNull(s.pendingCopy));
      h.assertAccounting();
    }
  }

  @Test
  void aChoicePreemptedBeforeItsCopyRanComesBackAndFinishes() {
    // prompt 40 (3 blocks, the last partial) and n = 3: after the prefill the three choices need
    // a block each for their copies, but 5 blocks leave room for two: the newest is preempted
    EngineHarness h = harness(5, true);
    h.submit("n3", tokens(100, 40), 3, 4);
    h.step();
    h.step();
    assertEquals(1, h.preemptions);
    assertEquals(2, h.lastBatch.copies().size());
    Sequence waiting = h.scheduler.waiting().peekFirst();
    assertNull(waiting.pendingCopy);
    assertEquals(0, waiting.tableSize());
    h.assertAccounting();
    h.runToCompletion();
    assertEquals(List.of("n3"), h.finished);
    assertEquals(3, h.tokens.keySet().stream().filter(k -> k.startsWith("n3#")).count());
  }

  @Test
  void aRequestThatFillsThePoolNeitherSharesNorCopiesItsPartialBlock() {
    // 3 blocks of 16: a 40-token prompt + 8 tokens fills the pool. Sharing the prompt's partial
    // block at the end of its prefill would need a 4th block for the copy, and a repeat's locked
    // copy source would leave it one block short: either would never finish. The first keeps
    // writing its own block; the repeat recomputes 32..39 instead of copying them.
    EngineHarness h = harness(3, true);
    h.submit("warm", tokens(100, 40), 1, 8);
    h.runToCompletion();
    assertEquals(0, h.preemptions);
    h.submit("again", tokens(100, 40), 1, 8);
    ScheduledStep first = h.step();
    assertEquals(List.of(), h.lastBatch.copies());
    assertEquals(8, first.totalTokens());
    h.runToCompletion();
    assertEquals(32, h.usage.get("again").cachedTokens());
  }

  @Test
  void aRequestWaitsForAWholeSharedBlockEvenWithAPartialOneCached() {
    // "other" caches a sequence starting with token 7; a and b share a 16-token prefix that also
    // starts with 7, so 1 token of each is cached: b must still wait for a's whole block
    EngineHarness h = harness(16, true);
    h.submit("other", IntStream.concat(IntStream.of(7), IntStream.range(500, 519)).toArray(), 1, 1);
    h.runToCompletion();
    int[] prefix = IntStream.concat(IntStream.of(7), IntStream.range(100, 115)).toArray();
    h.submit("a", IntStream.concat(IntStream.of(prefix), IntStream.range(200, 208)).toArray(), 1, 2);
    h.submit("b", IntStream.concat(IntStream.of(prefix), IntStream.range(300, 308)).toArray(), 1, 2);
    assertEquals(List.of("a"), h.step().chunks().stream().map(c -> c.seq().request.id()).toList());
    h.runToCompletion();
    assertEquals(List.of(1, 16), List.of(h.usage.get("a").cachedTokens(),
        h.usage.get("b").cachedTokens()));
  }
}
