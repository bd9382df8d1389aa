package dev.radixserve.cache;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Small deterministic cases: 11 blocks of 4 tokens, exact ids, lock counts and eviction order. */
class RadixCacheTest {

  private static final int B = 4;

  private final BlockPool pool = new BlockPool(11);
  private final RadixCache cache = new RadixCache(pool, B, EvictionPolicy.lru());
  /** Blocks the test (the "caller") holds: allocated and not yet in the tree. */
  private int inUse;

  /** Tokens {@code from, from + 1, ..., from + n - 1}. */
  static int[] run(int from, int n) {
    int[] t = new int[n];
    for (int i = 0; i < n; i++) {
      t[i] = from + i;
    }
    return t;
  }

  static int[] concat(int[] a, int[] b) {
    int[] c = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, c, a.length, b.length);
    return c;
  }

  private int[] allocate(int n) {
    inUse += n;
    return pool.allocate(n);
  }

  private InsertResult insert(int[] tokens, int[] ids) {
    InsertResult r = cache.insert(tokens, ids, "");
    // The caller held every id except the tree's own (from a match); the tree took the new
    // ones and the caller frees the duplicates right now.
    int treesOwn = r.alreadyCachedTokens() / B - r.duplicateBlockIds().length;
    inUse -= ids.length - treesOwn;
    pool.free(r.duplicateBlockIds());
    check();
    return r;
  }

  private void check() {
    cache.checkIntegrity(inUse);
  }

  @Test
  void multiTurnTrunkOutlivesItsBranchesWhileOneIsLocked() {
    int[] trunk = run(1, 8);
    int[] turnA = concat(trunk, run(11, 8));
    int[] turnB = concat(trunk, run(21, 8));

    MatchResult cold = cache.matchPrefix(trunk, trunk.length - 1, "");
    assertEquals(0, cold.matchedTokens());
    InsertResult t = insert(trunk, allocate(2));
    assertEquals(0, t.alreadyCachedTokens());
    assertArrayEquals(new int[0], t.duplicateBlockIds());

    MatchResult mA = cache.matchPrefix(turnA, turnA.length - 1, "");
    assertEquals(8, mA.matchedTokens());
    assertArrayEquals(new int[] {0, 1}, mA.blockIds());
    assertSame(t.node(), mA.node());
    cache.lock(mA.node());
    int[] idsA = concat(mA.blockIds(), allocate(2));
    InsertResult a = insert(turnA, idsA);
    assertEquals(8, a.alreadyCachedTokens());
    assertArrayEquals(new int[0], a.duplicateBlockIds());
    cache.lock(a.node());
    cache.unlock(mA.node());

    MatchResult mB = cache.matchPrefix(turnB, turnB.length - 1, "");
    assertArrayEquals(new int[] {0, 1}, mB.blockIds());
    InsertResult b = insert(turnB, concat(mB.blockIds(), allocate(2)));
    cache.lock(b.node());
    check();
    assertArrayEquals(new int[] {0, 1, 4, 5},
        cache.matchPrefix(turnB, turnB.length, "").blockIds());
    assertEquals(0, cache.evictableBlocks());
    assertEquals(6, cache.protectedBlocks());
    assertEquals(24, cache.protectedTokens());
    assertEquals(List.of(2, 1, 1), lockRefs()); // trunk, A, B

    cache.unlock(a.node()); // turn A finished; turn B still running
    assertEquals(List.of(1, 0, 1), lockRefs());
    assertEquals(2, cache.evictableBlocks());
    assertEquals(4, cache.protectedBlocks());
    assertEquals(5, pool.freeCount());

    // Pressure: a request needs 7 blocks. Only branch A can go; the trunk is under B's lock.
    assertEquals(2, cache.evict(7 - pool.freeCount()));
    check();
    assertEquals(0, cache.evict(1));
    assertArrayEquals(new int[] {3, 2, 6, 7, 8, 9, 10}, allocate(7));
    assertEquals(8, cache.matchPrefix(turnA, turnA.length, "").matchedTokens());
    assertEquals(16, cache.matchPrefix(turnB, turnB.length, "").matchedTokens());

    cache.unlock(b.node());
    check();
    assertEquals(4, cache.evictAll()); // branch B, then the trunk that became a leaf
    assertEquals(0, cache.cachedBlocks());
    assertEquals(List.of(), cache.snapshot().roots());
    check();
  }

  private List<Integer> lockRefs() {
    TreeSnapshot.Node trunk = cache.snapshot().roots().getFirst().children().getFirst();
    return List.of(trunk.lockRef(), trunk.children().get(0).lockRef(),
        trunk.children().get(1).lockRef());
  }

  @Test
  void partialMatchSplitsAtThePageBoundary() {
    InsertResult x = insert(run(100, 12), allocate(3)); // blocks 0, 1, 2
    int[] query = concat(run(100, 6), run(900, 6)); // diverges inside the second page
    MatchResult m = cache.matchPrefix(query, query.length, "");
    check();
    assertEquals(4, m.matchedTokens());
    assertArrayEquals(new int[] {0}, m.blockIds());
    assertEquals(2, cache.stats().nodes());
    TreeSnapshot.Node upper = cache.snapshot().roots().getFirst().children().getFirst();
    assertEquals(4, upper.tokens());
    assertEquals(1, upper.blocks());
    assertEquals(1, upper.hits());
    TreeSnapshot.Node lower = upper.children().getFirst();
    assertEquals(8, lower.tokens());
    assertEquals(2, lower.blocks());
    assertEquals(0, lower.hits());

    cache.lock(m.node());
    assertEquals(1, cache.protectedBlocks());
    assertEquals(2, cache.evictableBlocks());
    assertEquals(2, cache.evict(1)); // the whole lower node goes
    check();
    assertEquals(1, cache.cachedBlocks());
    assertEquals(0, cache.evictAll());
    cache.unlock(m.node());
    assertEquals(1, cache.evictAll());
    check();
    assertThrows(IllegalStateException.class, () -> cache.lock(x.node()));
  }

  @Test
  void splitKeepsLocksOnBothHalvesAndHandlesValid() {
    InsertResult x = insert(run(100, 12), allocate(3));
    cache.lock(x.node());
    MatchResult m = cache.matchPrefix(run(100, 8), 8, "");
    assertEquals(8, m.matchedTokens());
    TreeSnapshot.Node upper = cache.snapshot().roots().getFirst().children().getFirst();
    assertEquals(1, upper.lockRef());
    assertEquals(1, upper.children().getFirst().lockRef());
    assertEquals(3, cache.protectedBlocks());
    check();
    cache.unlock(x.node()); // the old handle now ends below the split: both halves released
    assertEquals(3, cache.evictableBlocks());
    check();
    IllegalStateException e =
        assertThrows(IllegalStateException.class, () -> cache.unlock(m.node()));
    assertEquals(true, e.getMessage().contains("lockRef 0"), e.getMessage());
  }

  @Test
  void siblingsMayShareAFirstTokenButNotAFirstPage() {
    int[] a = {7, 1, 1, 1, 5, 5, 5, 5};
    int[] b = {7, 2, 2, 2, 6, 6, 6, 6};
    insert(a, allocate(2));
    insert(b, allocate(2));
    assertEquals(2, cache.snapshot().roots().getFirst().children().size());
    assertArrayEquals(new int[] {2, 3}, cache.matchPrefix(b, 8, "").blockIds());
    assertArrayEquals(new int[] {0, 1}, cache.matchPrefix(a, 8, "").blockIds());
    assertEquals(0, cache.matchPrefix(new int[] {7, 1, 1, 2, 5, 5, 5, 5}, 8, "").matchedTokens());
  }

  @Test
  void matchIsPageAlignedAndStopsAtLength() {
    insert(run(1, 12), allocate(3));
    assertEquals(8, cache.matchPrefix(run(1, 12), 11, "").matchedTokens());
    assertEquals(0, cache.matchPrefix(run(1, 12), 3, "").matchedTokens());
    assertEquals(12, cache.matchPrefix(run(1, 20), 20, "").matchedTokens());
    assertThrows(IllegalArgumentException.class, () -> cache.matchPrefix(run(1, 4), 5, ""));
    check();
  }

  @Test
  void insertReturnsTheCallersDuplicatesOnly() {
    int[] prompt = run(50, 12);
    insert(prompt, allocate(2)); // tree: 8 tokens in blocks 0, 1
    int[] second = allocate(3); // 2, 3, 4: a concurrent prefill of the same prompt
    InsertResult r = cache.insert(prompt, second, "");
    assertEquals(8, r.alreadyCachedTokens());
    assertArrayEquals(new int[] {2, 3}, r.duplicateBlockIds());
    inUse -= 3;
    pool.free(r.duplicateBlockIds());
    check();
    assertArrayEquals(new int[] {0, 1, 4}, cache.matchPrefix(prompt, 12, "").blockIds());

    int[] mixed = {0, 3, 4}; // block 3 came back from the pool; 0 and 4 are the tree's own
    assertArrayEquals(new int[] {3}, allocate(1));
    InsertResult again = cache.insert(prompt, mixed, "");
    assertEquals(12, again.alreadyCachedTokens());
    assertArrayEquals(new int[] {3}, again.duplicateBlockIds());
  }

  @Test
  void namespacesNeverShareBlocks() {
    int[] prompt = run(1, 8);
    insert(prompt, allocate(2));
    InsertResult other = cache.insert(prompt, pool.allocate(2), "tenant-b");
    assertArrayEquals(new int[0], other.duplicateBlockIds());
    check();
    assertArrayEquals(new int[] {0, 1}, cache.matchPrefix(prompt, 8, "").blockIds());
    assertArrayEquals(new int[] {2, 3}, cache.matchPrefix(prompt, 8, "tenant-b").blockIds());
    MatchResult none = cache.matchPrefix(prompt, 8, "tenant-c");
    assertEquals(0, none.matchedTokens());
    cache.lock(none.node()); // a root handle: allowed, protects nothing
    cache.unlock(none.node());
    cache.unlock(none.node());
    assertEquals(List.of("", "tenant-b"),
        cache.snapshot().roots().stream().map(TreeSnapshot.Root::namespace).toList());
    cache.lock(other.node());
    assertEquals(2, cache.evictAll());
    assertEquals(List.of("tenant-b"),
        cache.snapshot().roots().stream().map(TreeSnapshot.Root::namespace).toList());
    check();
  }

  @Test
  void evictsLeastRecentlyUsedLeavesFirst() {
    InsertResult x = insert(run(100, 4), allocate(1)); // block 0
    InsertResult y = insert(run(200, 4), allocate(1)); // block 1
    InsertResult z = insert(run(300, 8), allocate(2)); // blocks 2, 3
    cache.matchPrefix(run(100, 4), 4, ""); // x is now the most recent
    assertEquals(1, cache.evict(1));
    assertEquals(0, cache.matchPrefix(run(200, 4), 4, "").matchedTokens());
    assertEquals(2, cache.evict(1)); // z: a whole node at a time, more than asked
    assertEquals(1, cache.evict(5));
    assertEquals(0, cache.cachedBlocks());
    assertArrayEquals(new int[] {0, 3, 2, 1}, pool.allocate(4)); // freed y(1), z(2,3), x(0)
    assertThrows(IllegalStateException.class, () -> cache.lock(y.node()));
    assertThrows(IllegalStateException.class, () -> cache.unlock(z.node()));
    assertThrows(IllegalStateException.class, () -> cache.lock(x.node()));
  }

  @Test
  void statsCountQueriesHitsAndBlocks() {
    insert(run(1, 8), allocate(2));
    cache.matchPrefix(run(1, 12), 11, "");
    cache.matchPrefix(run(1, 12), 3, "");
    cache.matchPrefix(run(1, 12), 11, "other");
    cache.evict(1);
    assertEquals(new CacheStats(3, 25, 8, 2, 2, 0, 0, 0), cache.stats());
  }

  @Test
  void badInputFailsLoudlyWithTheNumbers() {
    IllegalArgumentException wrongCount = assertThrows(IllegalArgumentException.class,
        () -> cache.insert(run(1, 10), new int[] {0, 1, 2}, ""));
    assertEquals("insert of 3 blocks of 4 tokens needs 12 tokens, got 10",
        wrongCount.getMessage());
    IllegalStateException freeBlock = assertThrows(IllegalStateException.class,
        () -> cache.insert(run(1, 4), new int[] {5}, ""));
    assertEquals("insert of block 5, which is free in the pool", freeBlock.getMessage());
    int[] ids = allocate(2);
    InsertResult r = insert(run(1, 8), ids);
    cache.lock(r.node());
    cache.unlock(r.node());
    IllegalStateException unlocked =
        assertThrows(IllegalStateException.class, () -> cache.unlock(r.node()));
    assertEquals("unlock of node#" + ((RadixNode) r.node()).id
        + "[8 tokens, 2 blocks, lockRef 0], which is not locked", unlocked.getMessage());
    IllegalStateException stolen = assertThrows(IllegalStateException.class,
        () -> cache.insert(run(500, 4), new int[] {1}, ""));
    assertEquals("insert hands over block 1 at page 0, but the tree already holds it"
        + " (or it appears twice)", stolen.getMessage());
    IllegalStateException accounting =
        assertThrows(IllegalStateException.class, () -> cache.checkIntegrity(inUse + 1));
    assertEquals("cached 2 + free 9 + in use 1 = 12 != total 11", accounting.getMessage());
    check();
  }

  @Test
  void listenersSeeStoresSplitsAndEvictionsInOrder() {
    List<String> events = new java.util.ArrayList<>();
    cache.addListener(new CacheListener() {
      @Override
      public void stored(String ns, long id, long parent, int[] path, int[] blocks) {
        events.add("stored " + id + " under " + parent + " path " + path.length + " blocks "
            + java.util.Arrays.toString(blocks));
      }

      @Override
      public void split(String ns, long id, long upper, int upperTokens) {
        events.add("split " + id + " upper " + upper + " at " + upperTokens);
      }

      @Override
      public void evicted(String ns, long id, int[] path, int[] blocks) {
        events.add("evicted " + id + " path " + path.length + " blocks "
            + java.util.Arrays.toString(blocks));
      }
    });
    int[] a = run(1, 8);
    InsertResult first = insert(a, allocate(2));
    long leafA = ((RadixNode) first.node()).id;
    long root = ((RadixNode) first.node()).parent.id;
    int[] b = concat(run(1, 4), run(50, 4));
    int[] bIds = allocate(2);
    InsertResult second = insert(b, bIds);
    long leafB = ((RadixNode) second.node()).id;
    long upper = ((RadixNode) second.node()).parent.id;
    assertEquals(3, cache.evict(3));
    assertEquals(List.of(
        "stored " + leafA + " under " + root + " path 8 blocks [0, 1]",
        "split " + leafA + " upper " + upper + " at 4",
        "stored " + leafB + " under " + upper + " path 8 blocks [" + bIds[1] + "]",
        "evicted " + leafA + " path 8 blocks [1]",
        "evicted " + leafB + " path 8 blocks [" + bIds[1] + "]",
        "evicted " + upper + " path 4 blocks [0]"), events);
  }

  @Test
  void replayTellsEveryNodeParentsFirstAndChangesNothing() {
    int[] a = run(1, 8);
    InsertResult first = insert(a, allocate(2));
    int[] b = concat(run(1, 4), run(50, 4));
    InsertResult second = insert(b, allocate(2));
    InsertResult salted = cache.insert(run(1, 4), allocate(1), "tenant");
    inUse -= 1;
    check();
    long upper = ((RadixNode) second.node()).parent.id;
    long root = ((RadixNode) second.node()).parent.parent.id;
    long saltedRoot = ((RadixNode) salted.node()).parent.id;
    CacheStats before = cache.stats();
    List<String> told = new java.util.ArrayList<>();
    cache.replay(new CacheListener() {
      @Override
      public void stored(String ns, long id, long parent, int[] path, int[] blocks) {
        told.add("'" + ns + "' " + id + " under " + parent + " " + java.util.Arrays.toString(path)
            + " " + java.util.Arrays.toString(blocks));
      }
    });
    RadixNode leafA = (RadixNode) first.node();
    RadixNode leafB = (RadixNode) second.node();
    RadixNode leafS = (RadixNode) salted.node();
    assertEquals(List.of(
        "'' " + upper + " under " + root + " [1, 2, 3, 4] [0]",
        "'' " + leafA.id + " under " + upper + " " + java.util.Arrays.toString(a) + " "
            + java.util.Arrays.toString(leafA.blocks),
        "'' " + leafB.id + " under " + upper + " " + java.util.Arrays.toString(b) + " "
            + java.util.Arrays.toString(leafB.blocks),
        "'tenant' " + leafS.id + " under " + saltedRoot + " [1, 2, 3, 4] "
            + java.util.Arrays.toString(leafS.blocks)), told);
    assertEquals(before, cache.stats());
  }
}
