package dev.radixserve.server.engine;

import static dev.radixserve.server.engine.TinyTierModel.A;
import static dev.radixserve.server.engine.TinyTierModel.B;
import static dev.radixserve.server.engine.TinyTierModel.BLOCKS;
import static dev.radixserve.server.engine.TinyTierModel.C;
import static dev.radixserve.server.engine.TinyTierModel.TINY;
import static dev.radixserve.server.engine.TinyTierModel.harness;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.radixserve.model.KvPool;
import dev.radixserve.model.OnnxModelRunner;
import dev.radixserve.server.config.SchedulePolicy;
import dev.radixserve.server.kvtier.DiskWritePolicy;
import dev.radixserve.server.kvtier.KvTiers;
import dev.radixserve.server.kvtier.TierStats;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Offload and load through the real runner on a tiny pool (8 blocks of 4): an evicted prompt's
 * whole blocks go to the tier, a repeat loads them into exact block ids with the very keys and
 * values the first run computed, and its greedy tokens equal those with the cache off; the same
 * from a disk tier read by a fresh runner (a restart).
 */
class TierOffloadKvTest extends TinyRunnerFixture<OnnxModelRunner> {

  TierOffloadKvTest() {
    super(w -> OnnxModelRunner.create(w, B, BLOCKS, 1));
  }

  private static KvTiers host(OnnxModelRunner r) {
    return KvTiers.create(64 * r.kvPool().bytesPerBlock(), null, 1, DiskWritePolicy.ALL,
        r.kvPool(), "tiny", "t", B);
  }

  private KvTiers disk(OnnxModelRunner r) {
    return KvTiers.create(0, dir, 64 * (r.kvPool().bytesPerBlock() + 4096), DiskWritePolicy.ALL,
        r.kvPool(), "tiny",
        "t", B);
  }

  /** Keys then values of every slot of a block, layer by layer. */
  private static float[][] rows(KvPool kv, int block) {
    float[][] out = new float[2 * TINY.nLayer() * B][];
    int i = 0;
    for (int layer = 0; layer < TINY.nLayer(); layer++) {
      for (int slot = 0; slot < B; slot++) {
        out[i++] = kv.keyRow(layer, block, slot);
        out[i++] = kv.valueRow(layer, block, slot);
      }
    }
    return out;
  }

  private List<Integer> coldTokens() {
    try (OnnxModelRunner off = OnnxModelRunner.create(weights, B, BLOCKS, 1)) {
      EngineHarness h = new EngineHarness(BLOCKS, B, false, SchedulePolicy.FCFS, 64,
          TINY.vocabSize(), (step, batch) -> off.forward(batch));
      h.submit("a", A, 1, 4);
      h.runToCompletion();
      return h.tokens.get("a#0");
    }
  }

  @Test
  void evictedBlocksGoToTheHostTierAndComeBackIntoExactIds() {
    try (KvTiers tiers = host(runner)) {
      EngineHarness h = harness(runner, tiers);
      h.submit("first", A, 1, 1);
      h.runToCompletion(); // A cached in blocks 0, 1, 2; block 3 freed
      assertEquals(3, h.cache.cachedBlocks());
      float[][] b0 = rows(runner.kvPool(), 0);
      float[][] b1 = rows(runner.kvPool(), 1);

      h.submit("other", C, 1, 1); // 6 blocks of 8: A's leaf goes (offloaded); C takes 0-5
      h.runToCompletion();
      TierStats afterEvict = tiers.stats().getFirst();
      assertEquals(3, afterEvict.stores());
      assertEquals(3, afterEvict.entries());
      assertEquals(0, h.cache.matchPrefix(A, A.length - 1, "").matchedTokens());

      h.submit("repeat", A, 1, 4);
      ScheduledStep loading = h.step(); // the load starts; nothing to compute yet
      assertEquals(List.of(), loading.chunks());
      assertArrayEquals(new int[] {6, 7}, h.sb.loadingBlocks().stream().mapToInt(i -> i).toArray());
      h.assertAccounting();
      h.step(); // loaded blocks cached, the repeat admitted (evicting C for its third block)
      assertArrayEquals(new int[] {6, 7, 0}, h.lastBatch.seqs().getFirst().blockTable());
      assertArrayEquals(new int[] {71, 5, 9, 14}, h.lastBatch.seqs().getFirst().newTokens());
      assertArrayEquals(b0, rows(runner.kvPool(), 6));
      assertArrayEquals(b1, rows(runner.kvPool(), 7));
      h.runToCompletion();

      assertEquals(8, h.usage.get("repeat").cachedTokens());
      assertEquals(coldTokens(), h.tokens.get("repeat#0"));
      TierStats host = tiers.stats().getFirst();
      assertEquals(2, host.hits());
      assertEquals(2, host.loads());
    }
  }

  @Test
  void aFreshRunnerLoadsFromTheDiskTierAndGivesTheSameTokens() {
    List<Integer> first;
    try (KvTiers tiers = disk(runner)) {
      EngineHarness h = harness(runner, tiers);
      h.submit("first", A, 1, 4);
      h.runToCompletion();
      first = h.tokens.get("first#0");
      tiers.persist(h.cache); // as a shutdown does
    }
    try (OnnxModelRunner restarted = OnnxModelRunner.create(weights, B, BLOCKS, 1);
        KvTiers tiers = disk(restarted)) {
      assertEquals(3, tiers.stats().getFirst().entries()); // A's 3 whole blocks, indexed at start
      EngineHarness h = harness(restarted, tiers);
      h.submit("again", A, 1, 4);
      h.runToCompletion();
      assertEquals(8, h.usage.get("again").cachedTokens());
      assertEquals(2, tiers.stats().getFirst().loads());
      assertEquals(first, h.tokens.get("again#0"));
      assertEquals(coldTokens(), h.tokens.get("again#0"));
    }
  }
}
