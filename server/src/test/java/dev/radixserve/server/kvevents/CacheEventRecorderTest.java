package dev.radixserve.server.kvevents;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.radixserve.cache.BlockPool;
import dev.radixserve.cache.EvictionPolicy;
import dev.radixserve.cache.RadixCache;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Records from a real radix cache (B = 4), and from token-granular nodes and splits. */
class CacheEventRecorderTest {

  private static final int B = 4;

  private static int[] run(int from, int n) {
    int[] t = new int[n];
    for (int i = 0; i < n; i++) {
      t[i] = from + i;
    }
    return t;
  }

  private static List<String> drain(CacheEventRecorder r) {
    List<CacheChange> changes = new ArrayList<>();
    r.queue().drainTo(changes);
    return changes.stream().map(c -> switch (c) {
      case CacheChange.Stored s -> "stored '" + s.namespace() + "' " + s.path().length + " ["
          + s.fromBlock() + "," + s.toBlock() + ")";
      case CacheChange.Removed x -> "removed '" + x.namespace() + "' " + x.path().length + " ["
          + x.fromBlock() + "," + x.toBlock() + ")";
      case CacheChange.TierStored x -> "tier stored " + x.medium() + " " + x.hash();
      case CacheChange.TierRemoved x -> "tier removed " + x.medium() + " " + x.hash();
      case CacheChange.Cleared x -> "cleared";
    }).toList();
  }

  private final BlockPool pool = new BlockPool(16);
  private final RadixCache cache = new RadixCache(pool, B, EvictionPolicy.lru());
  private final CacheEventRecorder r = new CacheEventRecorder(B, 100);

  CacheEventRecorderTest() {
    cache.addListener(r);
  }

  @Test
  void storesSplitsEvictionsAndAResetOfARealCache() {
    cache.insert(run(1, 12), pool.allocate(3), "");
    int[] branch = run(1, 16);
    branch[6] = 99; // shares block 0 only: splits the first leaf after one block
    cache.insert(branch, pool.allocate(4), "");
    cache.insert(run(1, 8), pool.allocate(2), "salt"); // another namespace, same tokens
    assertEquals(List.of("stored '' 12 [0,3)", "stored '' 16 [1,4)", "stored 'salt' 8 [0,2)"),
        drain(r));
    assertEquals(2, cache.evict(1)); // least recently used leaf: the first one's [1,3)
    assertEquals(List.of("removed '' 12 [1,3)"), drain(r));
    cache.evictAll();
    assertEquals(List.of("removed '' 16 [1,4)", "removed '' 4 [0,1)", "removed 'salt' 8 [0,2)",
        "cleared"), drain(r));
    assertEquals(0, r.dropped());
  }

  @Test
  void anEvictionThatEmptiesTheTreeIsPublishedBlockByBlockWithoutAClear() {
    cache.insert(run(1, 8), pool.allocate(2), "");
    cache.insert(run(50, 4), pool.allocate(1), "salt");
    drain(r);
    assertEquals(3, cache.evict(3)); // room for a request, not a reset: the tree ends empty
    assertEquals(0, cache.cachedBlocks());
    assertEquals(List.of("removed '' 8 [0,2)", "removed 'salt' 4 [0,1)"), drain(r));
  }

  @Test
  void aLockedNodeSurvivingAResetMeansNoClear() {
    cache.insert(run(1, 8), pool.allocate(2), "");
    cache.lock(cache.insert(run(50, 8), pool.allocate(2), "").node());
    drain(r);
    cache.evictAll();
    assertEquals(List.of("removed '' 8 [0,2)"), drain(r));
  }

  @Test
  void nodesEndingMidBlockPublishOnlyTheBlocksThatEndInsideThem() {
    // The token-granular tree: nodes and splits at any token; the listener sees paths whose
    // length is not a multiple of B. Node ids as a cache would give them; 0 is the root.
    r.stored("", 1, 0, run(1, 6), new int[] {10, 11}); // [0,6): block 0 whole, block 1 partial
    r.stored("", 2, 1, run(1, 13), new int[] {12, 13}); // [6,13): blocks 1, 2 end inside
    r.stored("", 3, 1, run(1, 7), new int[] {14}); // [6,7): nothing whole
    assertEquals(List.of("stored '' 6 [0,1)", "stored '' 13 [1,3)"), drain(r));
    r.split("", 2, 4, 3); // 4 = [6,9) takes block 1, 2 keeps [9,13) and block 2
    assertEquals(List.of(), drain(r));
    r.evicted("", 2, run(1, 13), new int[0]);
    r.evicted("", 3, run(1, 7), new int[0]);
    r.evicted("", 4, run(1, 9), new int[0]);
    r.evicted("", 1, run(1, 6), new int[0]);
    // evictions, even of the last node: removals only (a clear is for resets)
    assertEquals(List.of("removed '' 13 [2,3)", "removed '' 9 [1,2)", "removed '' 6 [0,1)"),
        drain(r));
  }

  @Test
  void aFullQueueDropsAndCountsInsteadOfWaiting() {
    CacheEventRecorder small = new CacheEventRecorder(B, 2);
    for (int i = 1; i <= 5; i++) {
      small.stored("", i, 0, run(100 * i, 4), new int[] {i});
    }
    assertEquals(2, small.recorded());
    assertEquals(3, small.dropped());
    assertEquals(2, drain(small).size());
  }
}
