package dev.radixserve.server.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.model.ForwardBatch;
import dev.radixserve.model.ForwardBatch.BlockCopy;
import dev.radixserve.model.KvPool;
import dev.radixserve.model.ModelConfig;
import dev.radixserve.model.OnnxModelRunner;
import dev.radixserve.model.weights.GptWeights;
import dev.radixserve.model.weights.RandomGpt2;
import dev.radixserve.server.config.SchedulePolicy;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Copy-on-write through the real runner on a tiny pool (16 blocks of 4): exact block ids, the
 * copied slots equal the source's in every layer (keys and values), the cached source block is
 * never written, a copy-started sequence's logits equal a cold run's within 1e-5, and greedy
 * tokens equal those with the cache off.
 */
class CopyOnWriteKvTest {

  private static final ModelConfig TINY = new ModelConfig(2, 2, 32, 64, 97, 1e-5, "gelu_new");
  private static final int B = 4;
  private static final int[] PROMPT = {11, 42, 7, 93, 15, 60, 3, 28, 71, 5}; // blocks 0, 1, 2 (2)

  private final GptWeights weights = RandomGpt2.create(TINY, 5);
  private final OnnxModelRunner runner = OnnxModelRunner.create(weights, B, 16, 1);

  @AfterEach
  void close() {
    runner.close();
    weights.close();
  }

  private EngineHarness harness(OnnxModelRunner r, boolean caching) {
    return new EngineHarness(r.numBlocks(), B, caching, SchedulePolicy.LPM, 64,
        TINY.vocabSize(), (step, batch) -> r.forward(batch));
  }

  /** Every slot of a block, keys then values, layer by layer. */
  private static float[][] rows(KvPool kv, int block, int slots) {
    float[][] out = new float[2 * TINY.nLayer() * slots][];
    int i = 0;
    for (int layer = 0; layer < TINY.nLayer(); layer++) {
      for (int slot = 0; slot < slots; slot++) {
        out[i++] = kv.keyRow(layer, block, slot);
        out[i++] = kv.valueRow(layer, block, slot);
      }
    }
    return out;
  }

  /** The last logits of {@code tokens} prefilled from scratch on a fresh runner. */
  private float[] cold(int[] tokens) {
    try (OnnxModelRunner fresh = OnnxModelRunner.create(weights, B, 16, 1)) {
      int[] table = {15, 14, 13, 12, 11, 10};
      return fresh.forward(new ForwardBatch(List.of(
          new ForwardBatch.Seq(tokens, 0, table))))[0];
    }
  }

  private static void assertClose(float[] expected, float[] actual) {
    double maxDiff = 0;
    double maxRef = 0;
    for (int i = 0; i < expected.length; i++) {
      maxDiff = Math.max(maxDiff, Math.abs(expected[i] - actual[i]));
      maxRef = Math.max(maxRef, Math.abs(expected[i]));
    }
    assertTrue(maxDiff / maxRef <= 1e-5, "relative difference " + maxDiff / maxRef);
  }

  @Test
  void repeatAndBranchStartInsideCachedBlocksAndMatchColdRuns() {
    EngineHarness h = harness(runner, true);
    h.submit("warm", PROMPT, 1, 1);
    h.runToCompletion(); // cached: 11 42 7 93 | 15 60 3 28 | 71 5 in blocks 0, 1, 2
    float[][] block1 = rows(runner.kvPool(), 1, B);
    float[][] block2 = rows(runner.kvPool(), 2, B); // slots 2-3 unwritten: they must stay so

    h.submit("repeat", PROMPT, 1, 4);
    h.step();
    assertEquals(List.of(new BlockCopy(2, 3, 1)), h.lastBatch.copies());
    assertArrayEquals(new int[] {0, 1, 3}, h.lastBatch.seqs().getFirst().blockTable());
    assertArrayEquals(new int[] {5}, h.lastBatch.seqs().getFirst().newTokens());
    assertArrayEquals(rows(runner.kvPool(), 2, 1), rows(runner.kvPool(), 3, 1));
    assertClose(cold(PROMPT), h.lastLogits[0]);

    int[] branch = {11, 42, 7, 93, 15, 60, 50, 51, 52};
    h.submit("branch", branch, 1, 4);
    h.step();
    assertEquals(List.of(new BlockCopy(1, 4, 2)), h.lastBatch.copies());
    assertArrayEquals(new int[] {0, 4, 5}, h.lastBatch.seqs().get(1).blockTable());
    assertArrayEquals(rows(runner.kvPool(), 1, 2), rows(runner.kvPool(), 4, 2));
    assertClose(cold(branch), h.lastLogits[1]);

    h.runToCompletion();
    assertEquals(List.of(0, 9, 6), List.of(h.usage.get("warm").cachedTokens(),
        h.usage.get("repeat").cachedTokens(), h.usage.get("branch").cachedTokens()));
    // the sources were only read: every slot as the first request left it
    assertArrayEquals(block1, rows(runner.kvPool(), 1, B));
    assertArrayEquals(block2, rows(runner.kvPool(), 2, B));

    try (OnnxModelRunner offRunner = OnnxModelRunner.create(weights, B, 16, 1)) {
      EngineHarness off = harness(offRunner, false);
      off.submit("repeat", PROMPT, 1, 4);
      off.submit("branch", branch, 1, 4);
      off.runToCompletion();
      assertEquals(off.tokens.get("repeat#0"), h.tokens.get("repeat#0"));
      assertEquals(off.tokens.get("branch#0"), h.tokens.get("branch#0"));
    }
  }

  @Test
  void forkedChoicesDecodeFromCopiesOfThePromptsPartialBlock() {
    EngineHarness h = harness(runner, true);
    h.submit("n3", PROMPT, 3, 5);
    h.step(); // the prompt; its block 2 (slots 0-1) is cached, every choice copies it
    h.step();
    assertEquals(List.of(new BlockCopy(2, 3, 2), new BlockCopy(2, 4, 2), new BlockCopy(2, 5, 2)),
        h.lastBatch.copies());
    for (int dst : new int[] {3, 4, 5}) {
      assertArrayEquals(rows(runner.kvPool(), 2, 2), rows(runner.kvPool(), dst, 2));
    }
    float[][] source = rows(runner.kvPool(), 2, B);
    h.runToCompletion();
    assertArrayEquals(source, rows(runner.kvPool(), 2, B));
    try (OnnxModelRunner offRunner = OnnxModelRunner.create(weights, B, 16, 1)) {
      EngineHarness off = harness(offRunner, false);
      off.submit("n1", PROMPT, 1, 5);
      off.runToCompletion();
      for (int choice = 0; choice < 3; choice++) { // greedy: every choice as one cold request
        assertEquals(off.tokens.get("n1#0"), h.tokens.get("n3#" + choice), "choice " + choice);
      }
    }
  }
}
