package dev.radixserve.server.engine;

import static dev.radixserve.server.engine.TinyTierModel.A;
import static dev.radixserve.server.engine.TinyTierModel.B;
import static dev.radixserve.server.engine.TinyTierModel.BLOCKS;
import static dev.radixserve.server.engine.TinyTierModel.harness;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.radixserve.model.OnnxModelRunner;
import dev.radixserve.server.kvtier.DiskWritePolicy;
import dev.radixserve.server.kvtier.KvTiers;
import dev.radixserve.server.kvtier.TierStats;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * {@code --kv-offload-disk-write}: on a tiny pool (8 blocks of 4) a prompt asked once (D) and a
 * prompt asked twice (A) are both evicted by a long third one (C). The host tier takes every
 * whole block either way; the disk tier takes all six under {@code all}, and under {@code
 * reused} only A's two blocks that its repeat was served from (its third block was the repeat's
 * partial copy, computed again, so not reused), or a block evicted for the second time.
 */
class DiskWritePolicyTest extends TinyRunnerFixture<OnnxModelRunner> {

  private static final int[] D = {31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 43}; // 3 blocks
  private static final int[] C = {
      1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25,
      26, 27, 28}; // 7 blocks: all of D and A must go

  DiskWritePolicyTest() {
    super(w -> OnnxModelRunner.create(w, B, BLOCKS, 1));
  }

  private KvTiers tiers(DiskWritePolicy policy) {
    return KvTiers.create(64 * runner.kvPool().bytesPerBlock(), dir,
        64 * (runner.kvPool().bytesPerBlock() + 4096), policy, runner.kvPool(), "tiny", "t", B);
  }

  /** Runs D once, A twice, then C; returns the host tier's entries after the evictions. */
  private long runWorkload(DiskWritePolicy policy) {
    try (KvTiers tiers = tiers(policy)) {
      EngineHarness h = harness(runner, tiers);
      h.submit("d", D, 1, 1);
      h.runToCompletion();
      h.submit("a", A, 1, 1);
      h.runToCompletion();
      h.submit("a-again", A, 1, 1);
      h.runToCompletion();
      // A's first two blocks shared, 3 tokens copied from its third (the copy is computed on)
      assertEquals(11, h.usage.get("a-again").cachedTokens());
      h.submit("c", C, 1, 1);
      h.runToCompletion();
      assertEquals(0, h.cache.matchPrefix(D, D.length - 1, "").matchedTokens());
      assertEquals(0, h.cache.matchPrefix(A, A.length - 1, "").matchedTokens());
      TierStats host = tiers.stats().getFirst();
      assertEquals("host", host.tier());
      return host.entries();
    } // close drains the disk writer
  }

  /** The token runs of the blocks the directory holds, read as a restart would. */
  private Set<List<Integer>> onDisk() {
    try (KvTiers restarted = KvTiers.create(0, dir, 1 << 20, DiskWritePolicy.ALL,
        runner.kvPool(), "tiny", "t", B)) {
      return restarted.index().stream()
          .map(b -> Arrays.stream(b.tokens()).boxed().toList())
          .collect(Collectors.toSet());
    }
  }

  private static List<Integer> block(int[] prompt, int i) {
    return Arrays.stream(prompt, i * B, (i + 1) * B).boxed().toList();
  }

  @Test
  void reusedWritesOnlyTheBlocksARepeatWasServedFrom() {
    assertEquals(6, runWorkload(DiskWritePolicy.REUSED));
    assertEquals(Set.of(block(A, 0), block(A, 1)), onDisk());
  }

  @Test
  void reusedWritesBlocksThatCameBackFromTheHostTierOrWereComputedAgain() {
    try (KvTiers tiers = tiers(DiskWritePolicy.REUSED)) {
      EngineHarness h = harness(runner, tiers);
      h.submit("d", D, 1, 1);
      h.runToCompletion();
      h.submit("c", C, 1, 1); // D goes to the host tier only: nobody reused it
      h.runToCompletion();
      assertEquals(0, tiers.stats().get(1).stores());
      h.submit("d-again", D, 1, 1); // its first two blocks come back from the host tier
      h.runToCompletion();
      assertEquals(8, h.usage.get("d-again").cachedTokens());
      assertEquals(2, tiers.stats().getFirst().loads());
      h.cache.evictAll();
    }
    // blocks 0 and 1 were loaded (reused); block 2 was computed again after its first eviction
    assertEquals(Set.of(block(D, 0), block(D, 1), block(D, 2)), onDisk());
  }

  /**
   * Without a host tier a prompt that only comes back after its eviction is never reused from
   * the pool; its blocks go to disk at their second eviction, and its third request loads them.
   */
  @Test
  void reusedWritesABlockAtItsSecondEvictionWithoutAHostTier() {
    int[] e = new int[28];
    for (int i = 0; i < e.length; i++) {
      e[i] = 50 + i; // 7 blocks, none shared with C or D
    }
    try (KvTiers tiers = KvTiers.create(0, dir, 64 * (runner.kvPool().bytesPerBlock() + 4096),
        DiskWritePolicy.REUSED, runner.kvPool(), "tiny", "t", B)) {
      EngineHarness h = harness(runner, tiers);
      h.submit("d", D, 1, 1);
      h.runToCompletion();
      h.submit("c", C, 1, 1); // evicts D: first eviction, kept off the disk
      h.runToCompletion();
      assertEquals(0, tiers.stats().getFirst().stores());
      h.submit("d-again", D, 1, 1); // nothing cached anywhere: computed again
      h.runToCompletion();
      assertEquals(0, h.usage.get("d-again").cachedTokens());
      h.submit("e", e, 1, 1); // evicts D again: now it goes to disk
      h.runToCompletion();
      // the disk writer is a thread of its own: wait for D's three files (a count, not a time)
      TierStats disk = tiers.stats().getFirst();
      long deadline = System.nanoTime() + 60_000_000_000L; // only a guard against hanging
      while (disk.stores() < 3 && disk.dropped() == 0 && System.nanoTime() < deadline) {
        Thread.onSpinWait();
        disk = tiers.stats().getFirst();
      }
      assertEquals(3, disk.stores(), "D's blocks, evicted a second time; C's and E's only once");
      assertEquals(0, h.cache.matchPrefix(D, D.length - 1, "").matchedTokens());
      h.submit("d-third", D, 1, 1);
      h.runToCompletion();
      assertEquals(8, h.usage.get("d-third").cachedTokens());
    }
    assertEquals(true, onDisk().containsAll(Set.of(block(D, 0), block(D, 1), block(D, 2))));
  }

  @Test
  void allWritesEveryEvictedBlock() {
    assertEquals(6, runWorkload(DiskWritePolicy.ALL));
    assertEquals(Set.of(block(D, 0), block(D, 1), block(D, 2), block(A, 0), block(A, 1),
        block(A, 2)), onDisk());
  }
}
