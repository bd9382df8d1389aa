package dev.radixserve.server.engine;

import static dev.radixserve.server.engine.TinyTierModel.A;
import static dev.radixserve.server.engine.TinyTierModel.B;
import static dev.radixserve.server.engine.TinyTierModel.BLOCKS;
import static dev.radixserve.server.engine.TinyTierModel.C;
import static dev.radixserve.server.engine.TinyTierModel.TINY;
import static dev.radixserve.server.engine.TinyTierModel.harness;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.radixserve.model.BoundModelRunner;
import dev.radixserve.model.Device;
import dev.radixserve.model.DeviceKvPool;
import dev.radixserve.model.graph.GraphDtype;
import dev.radixserve.server.config.SchedulePolicy;
import dev.radixserve.server.kvtier.DiskWritePolicy;
import dev.radixserve.server.kvtier.KvTiers;
import dev.radixserve.server.kvtier.TierStats;
import java.lang.foreign.ValueLayout;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The cache tiers over the IOBinding runner's device pool, run on the CPU with the fp16 stand-in
 * (the code path of {@code --device cuda}, with ONNX Runtime's CPU allocator): an evicted prompt's
 * blocks leave the pool through the read graph and come back through the write graph, bit for
 * bit, and greedy tokens with the cache off, cached, loaded from host memory and loaded from disk
 * by a fresh runner are one and the same.
 */
class TierOffloadDeviceKvTest extends TinyRunnerFixture<BoundModelRunner> {

  private static final Device FP16 = Device.cpu().withDtype(GraphDtype.FLOAT16);

  TierOffloadDeviceKvTest() {
    super(w -> BoundModelRunner.create(w, FP16, B, BLOCKS, 1));
  }

  private static KvTiers host(BoundModelRunner r) {
    return KvTiers.create(64 * r.kvPool().blockBytes(), null, 1, DiskWritePolicy.ALL,
        r.kvPool(), "tiny@float16",
        "t", B);
  }

  private KvTiers disk(BoundModelRunner r) {
    return KvTiers.create(0, dir, 64 * (r.kvPool().blockBytes() + 4096), DiskWritePolicy.ALL,
        r.kvPool(),
        "tiny@float16", "t,dtype=float16", B);
  }

  /** Block {@code block} of every cache, read straight from the pool's CPU memory. */
  private static byte[][] block(DeviceKvPool pool, int block) {
    long bytes = pool.blockBytes() / (2L * TINY.nLayer());
    byte[][] out = new byte[2 * TINY.nLayer()][];
    for (int l = 0; l < TINY.nLayer(); l++) {
      out[2 * l] = pool.keys(l).data().asSlice(block * bytes, bytes)
          .toArray(ValueLayout.JAVA_BYTE);
      out[2 * l + 1] = pool.values(l).data().asSlice(block * bytes, bytes)
          .toArray(ValueLayout.JAVA_BYTE);
    }
    return out;
  }

  private List<Integer> tokens(boolean caching, int[] prompt) {
    try (BoundModelRunner r = BoundModelRunner.create(weights, FP16, B, BLOCKS, 1)) {
      EngineHarness h = new EngineHarness(BLOCKS, B, caching, SchedulePolicy.FCFS, 64,
          TINY.vocabSize(), (step, batch) -> r.forward(batch));
      h.submit("a", prompt, 1, 4);
      h.runToCompletion();
      if (caching) { // and once more, from the pool's cache
        h.submit("b", prompt, 1, 4);
        h.runToCompletion();
        assertEquals(A.length - 1, h.usage.get("b").cachedTokens()); // token-granular
        assertEquals(h.tokens.get("a#0"), h.tokens.get("b#0"));
      }
      return h.tokens.get("a#0");
    }
  }

  @Test
  void evictedFp16BlocksComeBackFromTheHostTierBitForBit() {
    List<Integer> off = tokens(false, A);
    assertEquals(off, tokens(true, A), "cache on = off");
    try (KvTiers tiers = host(runner)) {
      assertEquals(2L * TINY.nLayer() * B * TINY.nEmbd() * 2, runner.kvPool().blockBytes());
      EngineHarness h = harness(runner, tiers);
      h.submit("first", A, 1, 1);
      h.runToCompletion(); // A cached in blocks 0, 1, 2
      byte[][] b0 = block(runner.kvPool(), 0);
      byte[][] b1 = block(runner.kvPool(), 1);

      h.submit("other", C, 1, 1); // A's leaf evicted (offloaded); C takes blocks 0-5
      h.runToCompletion();
      assertEquals(3, tiers.stats().getFirst().stores());
      assertEquals(0, h.cache.matchPrefix(A, A.length - 1, "").matchedTokens());

      h.submit("repeat", A, 1, 4);
      h.step(); // the load
      assertArrayEquals(new int[] {6, 7}, h.sb.loadingBlocks().stream().mapToInt(i -> i).toArray());
      h.step(); // loaded blocks cached, the repeat admitted
      assertArrayEquals(new int[] {6, 7, 0}, h.lastBatch.seqs().getFirst().blockTable());
      assertArrayEquals(b0, block(runner.kvPool(), 6));
      assertArrayEquals(b1, block(runner.kvPool(), 7));
      h.runToCompletion();

      assertEquals(8, h.usage.get("repeat").cachedTokens());
      assertEquals(off, h.tokens.get("repeat#0"), "loaded from host = off");
      TierStats stats = tiers.stats().getFirst();
      assertEquals(2, stats.loads());
    }
  }

  @Test
  void aFreshFp16RunnerLoadsFromTheDiskTierAndGivesTheSameTokens() {
    byte[][][] written = new byte[2][][];
    try (KvTiers tiers = disk(runner)) {
      EngineHarness h = harness(runner, tiers);
      h.submit("first", A, 1, 4);
      h.runToCompletion();
      int[] ids = h.cache.matchPrefix(A, 8, "").blockIds();
      written[0] = block(runner.kvPool(), ids[0]);
      written[1] = block(runner.kvPool(), ids[1]);
      tiers.persist(h.cache); // as a shutdown does
    }
    try (BoundModelRunner restarted = BoundModelRunner.create(weights, FP16, B, BLOCKS, 1);
        KvTiers tiers = disk(restarted)) {
      assertEquals(3, tiers.stats().getFirst().entries());
      EngineHarness h = harness(restarted, tiers);
      h.submit("again", A, 1, 4);
      h.runToCompletion();
      assertEquals(8, h.usage.get("again").cachedTokens());
      assertEquals(2, tiers.stats().getFirst().loads());
      int[] ids = h.cache.matchPrefix(A, 8, "").blockIds(); // where the loads landed
      assertArrayEquals(written[0], block(restarted.kvPool(), ids[0]));
      assertArrayEquals(written[1], block(restarted.kvPool(), ids[1]));
      assertEquals(tokens(false, A), h.tokens.get("again#0"), "loaded from disk = off");
    }
  }
}
