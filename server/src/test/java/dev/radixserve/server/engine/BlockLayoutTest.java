package dev.radixserve.server.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.server.config.SchedulePolicy;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * Where a sequence's blocks land in the pool: its prompt in one run of ids, and a decode that
 * needs a new block takes the id right after its last one when that is free (the attention then
 * reads the sequence as one stream; see {@code BlockPool}).
 */
class BlockLayoutTest {

  private static final int B = 16;

  private static int[] tokens(int from, int count) {
    return IntStream.range(from, from + count).toArray();
  }

  @Test
  void aPromptGetsOneRunAndADecodeGrowsRightAfterItsLastBlock() {
    EngineHarness h = new EngineHarness(16, B, false, SchedulePolicy.FCFS, 256,
        EngineHarness.TOKENIZER.vocabSize(), EngineHarness.FAKE);
    h.submit("z", tokens(900, 10), 1, 1); // 1 block, done (and given back) after one token
    Sequence a = h.submit("a", tokens(100, 40), 1, 20); // 40 + 20 tokens: 4 blocks in the end
    h.submit("b", tokens(500, 20), 1, 1); // 2 blocks, done after one token
    h.step();
    assertArrayEquals(new int[] {0}, h.lastBatch.seqs().get(0).blockTable());
    assertArrayEquals(new int[] {1, 2, 3}, h.lastBatch.seqs().get(1).blockTable());
    assertArrayEquals(new int[] {4, 5}, h.lastBatch.seqs().get(2).blockTable());
    assertTrue(h.pool.isFree(0) && h.pool.isFree(4) && h.pool.isFree(5));
    for (int i = 0; i < 100 && a.tableSize() < 4; i++) {
      h.step(); // a decodes up to position 48
    }
    // not the lowest free id (0), nor the last freed: 4 continues a's run
    assertArrayEquals(new int[] {1, 2, 3, 4}, a.blockTable());
    h.runToCompletion();
    assertTrue(h.finished.containsAll(java.util.List.of("z", "a", "b")), h.finished.toString());
    h.assertAccounting();
  }

  @Test
  void promptsPrefilledInChunksStillGetOneRunEach() {
    // 64 tokens a step: each 100-token prompt is split over steps, interleaved with the other's
    EngineHarness h = new EngineHarness(32, B, false, SchedulePolicy.FCFS, 64,
        EngineHarness.TOKENIZER.vocabSize(), EngineHarness.FAKE);
    Sequence a = h.submit("a", tokens(100, 100), 1, 8);
    Sequence b = h.submit("b", tokens(300, 100), 1, 8);
    // a: 64 tokens, then 36 with b's first 28; b: 64, then its last 8
    for (int i = 0; i < 4; i++) {
      h.step();
    }
    assertTrue(a.numComputed > 100 && b.numComputed >= 100, a.numComputed + ", " + b.numComputed);
    assertArrayEquals(IntStream.range(0, 7).toArray(), a.blockTable());
    assertArrayEquals(IntStream.range(7, 14).toArray(), b.blockTable());
    h.runToCompletion();
    h.assertAccounting();
  }
}
