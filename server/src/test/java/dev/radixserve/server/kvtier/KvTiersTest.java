package dev.radixserve.server.kvtier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.cache.BlockHasher;
import dev.radixserve.cache.BlockPool;
import dev.radixserve.cache.CacheNamespace;
import dev.radixserve.cache.EvictionPolicy;
import dev.radixserve.cache.RadixCache;
import dev.radixserve.model.KvPool;
import dev.radixserve.model.ModelConfig;
import dev.radixserve.server.engine.BlockTiers;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The tiers as the cache and the KV events see them: an evicted leaf's whole blocks go into
 * every tier under the KV events' hashes (a partial last block does not); a listener hears each
 * store with its medium, parent and salt, and on attaching hears what a restarted disk tier
 * indexed; another namespace or model finds nothing.
 */
class KvTiersTest {

  private static final ModelConfig TINY = new ModelConfig(1, 2, 16, 64, 97, 1e-5, "gelu_new");
  private static final int B = 4;
  private static final String SALTED = CacheNamespace.ofSalt("t");

  @TempDir
  Path dir;

  private static List<String> events(KvTiers tiers) {
    List<String> out = Collections.synchronizedList(new ArrayList<>());
    tiers.setListener(new TierListener() {
      @Override
      public void stored(String medium, long hash, Long parentHash, int[] tokens, String salt) {
        out.add(medium + "+" + Long.toHexString(hash) + " parent "
            + (parentHash == null ? "-" : Long.toHexString(parentHash)) + " salt " + salt);
      }

      @Override
      public void removed(String medium, long hash) {
        out.add(medium + "-" + Long.toHexString(hash));
      }
    });
    return out;
  }

  @Test
  void evictedWholeBlocksGoDownUnderTheEventHashesAndAreHeardWithTheirMedium() {
    int[] tokens = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}; // 2 whole blocks and 2 tokens
    long[] h = new BlockHasher("m", B).chain(SALTED, tokens, 2);
    String h0 = Long.toHexString(h[0]);
    String h1 = Long.toHexString(h[1]);
    try (KvPool pool = KvPool.ofBlocks(TINY, B, 8)) {
      List<String> heard;
      try (KvTiers tiers = KvTiers.create(8 * pool.bytesPerBlock(), dir, 1 << 20, DiskWritePolicy.ALL,
          pool, "m",
          "tiny", B)) {
        heard = events(tiers);
        BlockPool blocks = new BlockPool(8);
        RadixCache cache = new RadixCache(blocks, B, EvictionPolicy.lru());
        cache.addListener(tiers);
        cache.insert(tokens, tokens.length, blocks.allocate(3), SALTED);
        cache.evictAll();
        assertEquals(2, tiers.find(SALTED, tokens, 0, 2).count());
        assertEquals(0, tiers.find(CacheNamespace.DEFAULT, tokens, 0, 2).count());
        BlockTiers.TierHits fromOne = tiers.find(SALTED, tokens, 1, 2);
        assertEquals(1, fromOne.count());
        assertTrue(fromOne.load(0, 5));
      } // the disk writes finish on close
      // the disk writer reports on its own thread, so a DISK event may come between the two
      // CPU ones: their own order is what is checked
      assertEquals(List.of("CPU+" + h0 + " parent - salt t", "CPU+" + h1 + " parent " + h0
          + " salt null"), heard.stream().filter(e -> e.startsWith("CPU")).toList(),
          heard.toString());
      assertTrue(heard.containsAll(List.of("DISK+" + h0 + " parent - salt t",
          "DISK+" + h1 + " parent " + h0 + " salt null")), heard.toString());
      assertEquals(4, heard.size(), heard.toString());

      try (KvTiers restarted = KvTiers.create(0, dir, 1 << 20, DiskWritePolicy.ALL,
          pool, "m", "tiny", B);
          KvTiers otherModel = KvTiers.create(0, dir, 1 << 20, DiskWritePolicy.ALL,
              pool, "m2", "tiny", B)) {
        List<String> replayed = events(restarted);
        replayed.sort(null);
        List<String> expected = new ArrayList<>(List.of("DISK+" + h0 + " parent - salt null",
            "DISK+" + h1 + " parent " + h0 + " salt null"));
        expected.sort(null);
        assertEquals(expected, replayed); // the salt is in the hash, not in the file
        assertEquals(2, restarted.find(SALTED, tokens, 0, 2).count());
        assertEquals(0, otherModel.find(SALTED, tokens, 0, 2).count());
        assertEquals(2, otherModel.stats().getFirst().corrupt()); // another model's: skipped
      }
    }
  }
}
