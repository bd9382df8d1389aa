package dev.radixserve.server.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.model.ForwardBatch;
import dev.radixserve.model.KvPool;
import dev.radixserve.model.ModelConfig;
import dev.radixserve.server.config.SchedulePolicy;
import dev.radixserve.server.kvtier.DiskWritePolicy;
import dev.radixserve.server.kvtier.KvTiers;
import dev.radixserve.server.kvtier.TierStats;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Random interleavings of submit, step, abort, failure, reset and the loader's progress (loads
 * finish at random points, also after their request is gone) on a 24-block pool over a host tier
 * of 10 blocks and a disk tier of 20, checked after every operation: {@code free + cached + in
 * use == total} with loading blocks in use, cache integrity, no lock left when idle, no request
 * refused as too large because other requests' loads hold blocks. The fake
 * model writes into the pool, for every computed position, a code of the sequence's tokens up to
 * it, and checks before every step that each past position of each sequence holds its code: a
 * block loaded, copied or reused with the wrong content fails the step.
 */
class TierPropertyTest {

  private static final ModelConfig TINY = new ModelConfig(1, 2, 32, 256, 1000, 1e-5, "gelu_new");
  private static final int B = 4;
  private static final int BLOCKS = 24;

  @TempDir
  Path dir;

  /** A code of {@code tokens[0, p]}: never 0 (an unwritten slot). */
  private static float code(Sequence s, int p) {
    int h = 17;
    for (int i = 0; i <= p; i++) {
      h = h * 31 + s.token(i);
    }
    return (h & 0xFFFFF) + 1;
  }

  private static long offset(int block, int slot) {
    return ((long) block * B + slot) * TINY.nEmbd() * Float.BYTES;
  }

  private static EngineHarness.Forward checkingModel(KvPool pool) {
    return (step, batch) -> {
      for (ForwardBatch.BlockCopy c : batch.copies()) {
        pool.copyBlock(c.srcBlock(), c.dstBlock(), c.slots());
      }
      for (int k = 0; k < step.chunks().size(); k++) {
        Sequence s = step.chunks().get(k).seq();
        ForwardBatch.Seq seq = batch.seqs().get(k);
        int[] table = seq.blockTable();
        for (int p = 0; p < seq.pastLen(); p++) {
          float held = pool.keys(0).get(ValueLayout.JAVA_FLOAT, offset(table[p / B], p % B));
          assertEquals(code(s, p), held, s + " position " + p + " in block " + table[p / B]);
        }
        for (int p = seq.pastLen(); p < seq.totalLen(); p++) {
          pool.keys(0).set(ValueLayout.JAVA_FLOAT, offset(table[p / B], p % B), code(s, p));
        }
      }
      return EngineHarness.FAKE.run(step, batch);
    };
  }

  @ParameterizedTest
  @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8})
  void invariantsHoldUnderRandomOperations(long seed) {
    Random rnd = new Random(seed);
    int[][] bases = new int[4][];
    for (int i = 0; i < bases.length; i++) {
      bases[i] = rnd.ints(40, 0, 1000).toArray();
    }
    Deque<Runnable> loader = new ArrayDeque<>();
    try (KvPool pool = KvPool.ofBlocks(TINY, B, BLOCKS);
        KvTiers tiers = KvTiers.create(10 * pool.bytesPerBlock(), dir.resolve("s" + seed),
            20 * (pool.bytesPerBlock() + 1024), DiskWritePolicy.ALL, pool, "m", "tiny", B)) {
      EngineHarness h = new EngineHarness(BLOCKS, B, true, SchedulePolicy.LPM, 24,
          EngineHarness.TOKENIZER.vocabSize(), 8, checkingModel(pool), cache -> {
            cache.addListener(tiers);
            return tiers;
          }, loader::add);
      int submitted = 0;
      for (int op = 0; op < 400; op++) {
        int r = rnd.nextInt(100);
        if (r < 25) {
          int[] base = bases[rnd.nextInt(bases.length)];
          int keep = 4 + rnd.nextInt(base.length - 4);
          int[] prompt = Arrays.copyOf(base, keep + rnd.nextInt(6));
          for (int i = keep; i < prompt.length; i++) {
            prompt[i] = rnd.nextInt(1000);
          }
          h.submit("r" + submitted++, prompt, rnd.nextInt(8) == 0 ? 2 : 1, 1 + rnd.nextInt(6));
        } else if (r < 60) {
          h.step();
        } else if (r < 80) {
          if (!loader.isEmpty()) {
            loader.poll().run();
          }
        } else if (r < 93) {
          List<String> live = h.liveRequests();
          if (!live.isEmpty()) {
            h.drop(live.get(rnd.nextInt(live.size())),
                rnd.nextBoolean() ? FinishReason.ABORT : FinishReason.ERROR);
          }
        } else if (r < 96) {
          h.sb.resetCache();
        } else {
          h.cache.evictAll(); // pressure: everything unlocked goes down a tier
        }
        h.assertAccounting();
        // every request fits the pool alone: none may be refused because loads hold blocks
        assertEquals(List.of(), h.scheduler.takeNeverAdmissible());
      }
      for (int i = 0; i < 10_000 && (h.scheduler.hasWork() || !loader.isEmpty()); i++) {
        while (!loader.isEmpty()) {
          loader.poll().run();
        }
        h.step();
        h.assertAccounting();
      }
      h.step(); // takes back loads that finished after their request went
      assertEquals(false, h.scheduler.hasWork());
      assertEquals(false, h.sb.loadsInFlight());
      h.assertAccounting();
      assertEquals(0, h.cache.protectedBlocks());
      List<TierStats> stats = tiers.stats();
      assertTrue(stats.get(0).entries() <= 10, stats.toString());
      assertTrue(stats.get(0).loads() > 0, "no load from the host tier: " + stats);
    }
  }
}
