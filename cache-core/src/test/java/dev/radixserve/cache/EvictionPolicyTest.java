package dev.radixserve.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Eviction order under each policy: 11 blocks of 4 tokens, exact evicted blocks in order. */
class EvictionPolicyTest {

  private static final int B = 4;

  private final BlockPool pool = new BlockPool(11);
  private final List<Integer> evicted = new ArrayList<>();

  private RadixCache cache(EvictionPolicy policy) {
    RadixCache cache = new RadixCache(pool, B, policy);
    cache.addListener(new CacheListener() {
      @Override
      public void evicted(String ns, long id, int[] path, int[] blocks) {
        for (int b : blocks) {
          evicted.add(b);
        }
      }
    });
    return cache;
  }

  /** x, y, z inserted in that order (blocks 0, 1, 2); then hits: x twice, z once, y once. */
  private RadixCache threeLeaves(EvictionPolicy policy) {
    RadixCache cache = cache(policy);
    cache.insert(RadixCacheTest.run(100, 4), pool.allocate(1), "");
    cache.insert(RadixCacheTest.run(200, 4), pool.allocate(1), "");
    cache.insert(RadixCacheTest.run(300, 4), pool.allocate(1), "");
    cache.matchPrefix(RadixCacheTest.run(100, 4), 4, "");
    cache.matchPrefix(RadixCacheTest.run(100, 4), 4, "");
    cache.matchPrefix(RadixCacheTest.run(300, 4), 4, "");
    cache.matchPrefix(RadixCacheTest.run(200, 4), 4, "");
    return cache;
  }

  @Test
  void lruEvictsLeastRecentlyTouchedFirst() {
    RadixCache cache = threeLeaves(EvictionPolicy.lru());
    assertEquals(3, cache.evictAll());
    assertEquals(List.of(0, 2, 1), evicted);
  }

  @Test
  void lfuEvictsFewestHitsFirstThenLeastRecent() {
    RadixCache cache = threeLeaves(EvictionPolicy.lfu());
    assertEquals(3, cache.evictAll());
    assertEquals(List.of(2, 1, 0), evicted);
    cache.checkIntegrity(0);
  }

  @Test
  void priorityEvictsLowestFirstThenLeastRecent() {
    RadixCache cache = cache(EvictionPolicy.priority());
    cache.insert(RadixCacheTest.run(100, 4), pool.allocate(1), "", 5); // block 0
    cache.insert(RadixCacheTest.run(200, 4), pool.allocate(1), "", 0); // block 1
    cache.insert(RadixCacheTest.run(300, 4), pool.allocate(1), "", 5); // block 2
    assertEquals(3, cache.evictAll());
    assertEquals(List.of(1, 0, 2), evicted);
  }

  @Test
  void priorityIsRaisedAlongThePathAndCascadesToParents() {
    RadixCache cache = cache(EvictionPolicy.priority());
    int[] trunk = RadixCacheTest.run(1, 8);
    cache.insert(trunk, pool.allocate(2), "", 0); // blocks 0, 1
    int[] branch = RadixCacheTest.concat(trunk, RadixCacheTest.run(50, 4));
    cache.insert(branch, new int[] {0, 1, pool.allocate(1)[0]}, "", 7); // block 2, trunk -> 7
    cache.insert(RadixCacheTest.run(90, 4), pool.allocate(1), "", 3); // block 3
    cache.checkIntegrity(0);
    assertEquals(1, cache.evict(1));
    assertEquals(List.of(3), evicted);
    assertEquals(3, cache.evictAll()); // the branch (7), then the trunk, now a leaf
    assertEquals(List.of(3, 2, 0, 1), evicted);
  }
}
