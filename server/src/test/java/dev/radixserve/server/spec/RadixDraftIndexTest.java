package dev.radixserve.server.spec;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.cache.BlockPool;
import dev.radixserve.cache.EvictionPolicy;
import dev.radixserve.cache.RadixCache;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The draft index fed by a real radix cache's events: 4-token blocks, a pool of 16. */
class RadixDraftIndexTest {

  private final BlockPool pool = new BlockPool(16);
  private final RadixCache cache = new RadixCache(pool, 4, EvictionPolicy.lru());

  private void insert(int[] tokens, String namespace) {
    int blocks = (tokens.length + 3) / 4;
    cache.insert(tokens, tokens.length, pool.allocate(blocks), namespace);
  }

  @Test
  void proposesWhatFollowsInTheCacheOfTheSameNamespaceOnly() {
    RadixDraftIndex index = new RadixDraftIndex(4, 3, 1000);
    cache.addListener(index);
    insert(new int[] {10, 11, 12, 13, 14, 15, 16, 17, 18, 19}, "tenant-a");
    int[] query = {99, 12, 13, 14};
    assertArrayEquals(new int[] {15, 16, 17}, index.in("tenant-a").propose(query, 4, 5));
    assertArrayEquals(new int[] {15, 16}, index.in("tenant-a").propose(query, 4, 2));
    assertArrayEquals(new int[0], index.in("tenant-b").propose(query, 4, 5));
    assertArrayEquals(new int[0], index.in("").propose(query, 4, 5));
    // the last tokens of the path have no continuation to propose
    assertArrayEquals(new int[0], index.in("tenant-a").propose(new int[] {17, 18, 19}, 3, 5));
  }

  @Test
  void aLeafIndexesOnlyItsOwnTokensAndNGramsReachingIntoItsParent() {
    RadixDraftIndex index = new RadixDraftIndex(4, 4, 1000);
    cache.addListener(index);
    insert(new int[] {1, 2, 3, 4, 5, 6, 7, 8}, "");
    int before = index.size();
    insert(new int[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, ""); // a child leaf: 9..12
    // positions 8..11 (n-grams ending there; the one ending at 8 starts in the parent)
    assertEquals(before + 4, index.size());
    assertArrayEquals(new int[] {9, 10, 11, 12}, index.in("").propose(new int[] {6, 7, 8}, 3, 4));
  }

  @Test
  void anEvictedLeafProposesNothing() {
    RadixDraftIndex index = new RadixDraftIndex(4, 3, 1000);
    cache.addListener(index);
    insert(new int[] {1, 2, 3, 4, 5, 6, 7, 8}, "");
    assertArrayEquals(new int[] {4, 5, 6}, index.in("").propose(new int[] {1, 2, 3}, 3, 3));
    assertEquals(2, cache.evictAll());
    assertArrayEquals(new int[0], index.in("").propose(new int[] {1, 2, 3}, 3, 3));
  }

  @Test
  void holdsAtMostItsEntriesTheOldestGoingFirst() {
    RadixDraftIndex index = new RadixDraftIndex(4, 2, 10);
    cache.addListener(index);
    insert(IntStream.range(100, 140).toArray(), ""); // 37 n-grams with a continuation
    assertEquals(10, index.size());
    assertArrayEquals(new int[0], index.in("").propose(new int[] {100, 101, 102}, 3, 2));
    assertArrayEquals(new int[] {136, 137},
        index.in("").propose(new int[] {133, 134, 135}, 3, 2));
  }

  @Test
  void replayIndexesWhatTheCacheHeldBefore() {
    insert(new int[] {1, 2, 3, 4, 5, 6}, "x");
    RadixDraftIndex index = new RadixDraftIndex(4, 3, 1000);
    cache.replay(index);
    assertTrue(index.size() > 0);
    assertArrayEquals(new int[] {4, 5, 6}, index.in("x").propose(new int[] {1, 2, 3}, 3, 3));
  }
}
