package dev.radixserve.cache;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
    return insert(tokens, ids.length * B, ids);
  }

  private InsertResult insert(int[] tokens, int length, int[] ids) {
    InsertResult r = cache.insert(tokens, length, ids, "");
    // The caller held every id except the tree's own (from a match); the tree took the new
    // ones and the caller frees the duplicates right now.
    int treesOwn = (r.alreadyCachedTokens() + B - 1) / B - r.duplicateBlockIds().length;
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
    assertTrue(pool.isFree(2) && pool.isFree(3)); // branch A's blocks, and only those
    assertArrayEquals(new int[] {2, 3, 6, 7, 8, 9, 10}, allocate(7));
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
  void matchEndingInsideABlockLendsThatBlockAsCopySourceOnItsOwnNode() {
    InsertResult x = insert(run(100, 12), allocate(3)); // blocks 0, 1, 2
    int[] query = concat(run(100, 6), run(900, 6)); // diverges inside the second page
    MatchResult m = cache.matchPrefix(query, query.length, "");
    check();
    assertEquals(6, m.matchedTokens());
    assertArrayEquals(new int[] {0, 1}, m.blockIds());
    assertEquals(2, m.partialTokens());
    assertEquals(1, m.copySource());
    assertArrayEquals(new int[] {0}, m.fullBlockIds());
    assertEquals(3, cache.stats().nodes()); // split at both block boundaries around the source
    TreeSnapshot.Node upper = cache.snapshot().roots().getFirst().children().getFirst();
    assertEquals(List.of(4, 1, 1L), List.of(upper.tokens(), upper.blocks(), upper.hits()));
    TreeSnapshot.Node source = upper.children().getFirst();
    assertEquals(List.of(4, 1, 1L), List.of(source.tokens(), source.blocks(), source.hits()));
    TreeSnapshot.Node lower = source.children().getFirst();
    assertEquals(List.of(4, 1, 0L), List.of(lower.tokens(), lower.blocks(), lower.hits()));

    cache.lock(m.fullBlocksNode()); // for as long as the sequence runs
    cache.lock(m.node()); // until its copy is done
    assertEquals(2, cache.protectedBlocks());
    assertEquals(1, cache.evictableBlocks());
    assertEquals(1, cache.evict(5)); // only block 2 can go
    check();
    cache.unlock(m.node()); // copied: the source may go now, the whole block stays
    assertEquals(1, cache.evictAll());
    assertEquals(1, cache.cachedBlocks());
    cache.unlock(m.fullBlocksNode());
    assertEquals(1, cache.evictAll());
    check();
    assertThrows(IllegalStateException.class, () -> cache.lock(x.node()));
  }

  @Test
  void repeatMatchesAllButTheLastTokenFromAPartialLeaf() {
    int[] prompt = run(1, 10);
    InsertResult first = insert(prompt, 10, allocate(3)); // blocks 0, 1, 2 (2 slots)
    assertEquals(0, first.alreadyCachedTokens());
    MatchResult again = cache.matchPrefix(prompt, prompt.length - 1, "");
    assertEquals(9, again.matchedTokens());
    assertArrayEquals(new int[] {0, 1, 2}, again.blockIds());
    assertEquals(1, again.partialTokens());
    assertSame(first.node(), again.node()); // the partial leaf, one block: no split needed
    check();
    // the repeat computed token 9 into its own copy, block 3; its insert finds all cached
    int[] mine = {0, 1, allocate(1)[0]};
    InsertResult second = insert(prompt, 10, mine);
    assertEquals(10, second.alreadyCachedTokens());
    assertArrayEquals(new int[] {3}, second.duplicateBlockIds());
    assertSame(first.node(), second.node());
  }

  @Test
  void branchInsideABlockMatchesToTheBranchPoint() {
    insert(run(1, 10), 10, allocate(3)); // blocks 0, 1, 2
    int[] branch = concat(run(1, 6), run(50, 6));
    MatchResult m = cache.matchPrefix(branch, branch.length - 1, "");
    assertEquals(6, m.matchedTokens());
    assertArrayEquals(new int[] {0, 1}, m.blockIds());
    assertEquals(2, m.partialTokens());
    check();
  }

  /** The class comment's example: a sequence that goes on past a partial leaf. */
  @Test
  void goingOnPastAPartialLeafAddsASiblingWithItsOwnCopy() {
    int[] abcdef = run(1, 6);
    insert(abcdef, 6, allocate(2)); // U: 1 2 3 4 in block 0; P: 5 6 in block 1 (slots 0-1)
    int[] longer = run(1, 9);
    MatchResult m = cache.matchPrefix(longer, 8, "");
    assertEquals(6, m.matchedTokens());
    assertEquals(1, m.copySource());
    cache.lock(m.fullBlocksNode());
    cache.lock(m.node());
    int[] own = allocate(2); // 2: the copy of block 1's slots 0-1, then 7 8; 3: token 9
    assertArrayEquals(new int[] {2, 3}, own);
    InsertResult q = insert(longer, 9, concat(m.fullBlockIds(), own));
    assertEquals(4, q.alreadyCachedTokens());
    assertArrayEquals(new int[0], q.duplicateBlockIds());
    cache.unlock(m.node());
    cache.unlock(m.fullBlocksNode());
    check();
    TreeSnapshot.Node u = cache.snapshot().roots().getFirst().children().getFirst();
    assertEquals(List.of(4, 1), List.of(u.tokens(), u.blocks()));
    assertEquals(List.of(List.of(2, 1), List.of(5, 2)), u.children().stream()
        .map(c -> List.of(c.tokens(), c.blocks())).toList()); // P, then Q: blocks never shared
    assertEquals(4, cache.cachedBlocks());
    // "1 2 3 4 5 x" borrows from Q (a whole first page) rather than P (partial): block 2
    MatchResult borrow = cache.matchPrefix(concat(run(1, 5), new int[] {99, 99}), 6, "");
    assertArrayEquals(new int[] {0, 2}, borrow.blockIds());
    assertEquals(1, borrow.partialTokens());
    // P is an unlocked leaf that no match touches now: evicted first, its block freed alone
    assertEquals(1, cache.evict(1));
    assertEquals(2, cache.matchPrefix(abcdef, 6, "").partialTokens()); // from Q's copy now
    check();
  }

  @Test
  void insertGoingOnPastALongPartialLeafSplitsItAtItsLastBoundary() {
    insert(run(1, 6), 6, allocate(2)); // one leaf, 6 tokens, blocks 0 and 1 (partial)
    int[] mine = allocate(3); // 2, 3, 4: computed without seeing the leaf
    InsertResult r = insert(run(1, 10), 10, mine);
    assertEquals(4, r.alreadyCachedTokens());
    assertArrayEquals(new int[] {2}, r.duplicateBlockIds());
    TreeSnapshot.Node u = cache.snapshot().roots().getFirst().children().getFirst();
    assertEquals(List.of(4, 1), List.of(u.tokens(), u.blocks()));
    assertEquals(List.of(2, 6), u.children().stream().map(TreeSnapshot.Node::tokens).toList());
    assertArrayEquals(new int[] {0, 3, 4}, cache.matchPrefix(run(1, 10), 10, "").blockIds());
  }

  @Test
  void partialInsertInsideABlockTheTreeLentIsNoDuplicate() {
    insert(run(1, 8), allocate(2)); // 1..4 in block 0, 5..8 in block 1
    insert(concat(run(1, 6), new int[] {0, 0}), allocate(2)); // sibling page 5 6 0 0: block 3
    MatchResult m = cache.matchPrefix(run(1, 8), 8, "");
    assertArrayEquals(new int[] {0, 1}, m.blockIds());
    // a caller holding blocks 0, 1 caches its first 6 tokens: both pages begin with 5 6, and
    // the smaller one (5 6 0 0) ranks first, but block 1 is the caller's own and no duplicate
    InsertResult r = cache.insert(run(1, 6), 6, m.blockIds(), "");
    assertEquals(6, r.alreadyCachedTokens());
    assertArrayEquals(new int[0], r.duplicateBlockIds());
    InsertResult other = insert(run(1, 6), 6, new int[] {0, allocate(1)[0]});
    assertArrayEquals(new int[] {2}, other.duplicateBlockIds()); // compared with block 3
    check();
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
    MatchResult inside = cache.matchPrefix(new int[] {7, 1, 1, 2, 5, 5, 5, 5}, 8, "");
    assertEquals(3, inside.matchedTokens()); // three tokens of a's first block
    assertEquals(0, inside.copySource());
  }

  @Test
  void matchIsTokenGranularAndStopsAtLength() {
    insert(run(1, 12), allocate(3));
    MatchResult eleven = cache.matchPrefix(run(1, 12), 11, "");
    assertEquals(List.of(11, 3), List.of(eleven.matchedTokens(), eleven.partialTokens()));
    assertArrayEquals(new int[] {0, 1, 2}, eleven.blockIds());
    MatchResult three = cache.matchPrefix(run(1, 12), 3, "");
    assertEquals(List.of(3, 3), List.of(three.matchedTokens(), three.partialTokens()));
    assertArrayEquals(new int[] {0}, three.blockIds());
    MatchResult all = cache.matchPrefix(run(1, 20), 20, "");
    assertEquals(List.of(12, 0), List.of(all.matchedTokens(), all.partialTokens()));
    assertSame(all.node(), all.fullBlocksNode());
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

    int[] mixed = {0, 2, 4}; // block 2 came back from the pool; 0 and 4 are the tree's own
    assertArrayEquals(new int[] {2}, allocate(1));
    InsertResult again = cache.insert(prompt, mixed, "");
    assertEquals(12, again.alreadyCachedTokens());
    assertArrayEquals(new int[] {2}, again.duplicateBlockIds());
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
    assertEquals(List.of(1), freeOf(0, 1, 2, 3)); // y
    assertEquals(0, cache.matchPrefix(run(200, 4), 4, "").matchedTokens());
    assertEquals(2, cache.evict(1)); // z: a whole node at a time, more than asked
    assertEquals(List.of(1, 2, 3), freeOf(0, 1, 2, 3));
    assertEquals(1, cache.evict(5));
    assertEquals(0, cache.cachedBlocks());
    assertEquals(List.of(0, 1, 2, 3), freeOf(0, 1, 2, 3)); // x last
    assertThrows(IllegalStateException.class, () -> cache.lock(y.node()));
    assertThrows(IllegalStateException.class, () -> cache.unlock(z.node()));
    assertThrows(IllegalStateException.class, () -> cache.lock(x.node()));
  }

  @Test
  void statsCountQueriesHitsAndBlocks() {
    insert(run(1, 8), allocate(2));
    cache.matchPrefix(run(1, 12), 11, ""); // 8
    cache.matchPrefix(run(1, 12), 3, ""); // 3, inside block 0: splits the node after it
    cache.matchPrefix(run(1, 12), 11, "other"); // 0
    assertEquals(1, cache.evict(1)); // the lower node, block 1
    assertEquals(new CacheStats(3, 25, 11, 2, 1, 1, 1, 1), cache.stats());
  }

  @Test
  void badInputFailsLoudlyWithTheNumbers() {
    IllegalArgumentException tooFew = assertThrows(IllegalArgumentException.class,
        () -> cache.insert(run(1, 10), new int[] {0, 1, 2}, ""));
    assertEquals("insert of 12 tokens, but 10 given", tooFew.getMessage());
    IllegalArgumentException wrongCount = assertThrows(IllegalArgumentException.class,
        () -> cache.insert(run(1, 10), 9, new int[] {0, 1}, ""));
    assertEquals("insert of 9 tokens needs 3 blocks of 4, got 2", wrongCount.getMessage());
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
  void listenersSeePartialLeavesAsLeavesWhoseLastBlockIsPartial() {
    List<String> events = new java.util.ArrayList<>();
    cache.addListener(new CacheListener() {
      @Override
      public void stored(String ns, long id, long parent, int[] path, int[] blocks) {
        events.add("stored path " + path.length + " blocks " + java.util.Arrays.toString(blocks));
      }

      @Override
      public void split(String ns, long id, long upper, int upperTokens) {
        events.add("split at " + upperTokens);
      }

      @Override
      public void evicted(String ns, long id, int[] path, int[] blocks) {
        events.add("evicted path " + path.length + " blocks " + java.util.Arrays.toString(blocks));
      }
    });
    insert(run(1, 6), 6, allocate(2)); // blocks 0, 1: 1 2 3 4 | 5 6 . .
    MatchResult m = cache.matchPrefix(run(1, 9), 8, ""); // 6 tokens, source block 1
    cache.lock(m.fullBlocksNode());
    insert(run(1, 9), 9, concat(m.fullBlockIds(), allocate(2))); // blocks 2, 3: a sibling
    cache.unlock(m.fullBlocksNode());
    assertEquals(4, cache.evictAll());
    assertEquals(List.of(
        "stored path 6 blocks [0, 1]",
        "split at 4",
        "stored path 9 blocks [2, 3]",
        "evicted path 6 blocks [1]",
        "evicted path 9 blocks [2, 3]",
        "evicted path 4 blocks [0]"), events);
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

  /** Which of {@code ids} are free in the pool. */
  private List<Integer> freeOf(int... ids) {
    return java.util.Arrays.stream(ids).filter(pool::isFree).boxed().toList();
  }
}
