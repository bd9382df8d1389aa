package dev.radixserve.cache;

import static dev.radixserve.cache.RadixCacheTest.concat;
import static dev.radixserve.cache.RadixCacheTest.run;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The snapshot and the listener's event stream on exact tiny trees (11 blocks of 4 tokens): node
 * ids, namespace roots, tokens and blocks per node, locks, hits, access clock, evictable leaves.
 */
class TreeSnapshotTest {

  private static final int B = 4;

  private final BlockPool pool = new BlockPool(11);
  private final RadixCache cache = new RadixCache(pool, B, EvictionPolicy.lru());
  private final List<String> events = new ArrayList<>();

  TreeSnapshotTest() {
    cache.addListener(new CacheListener() {
      @Override
      public void stored(String ns, long id, long parent, int[] path, int[] blocks) {
        events.add("stored '" + ns + "' #" + id + " under #" + parent + " path " + path.length
            + " blocks " + Arrays.toString(blocks));
      }

      @Override
      public void split(String ns, long id, long upper, int upperTokens) {
        events.add("split '" + ns + "' #" + id + " upper #" + upper + " " + upperTokens);
      }

      @Override
      public void evicted(String ns, long id, int[] path, int[] blocks) {
        events.add("evicted '" + ns + "' #" + id + " path " + path.length + " blocks "
            + Arrays.toString(blocks));
      }

      @Override
      public void locked(String ns, long id, int lockRef) {
        events.add("locked #" + id + " ref " + lockRef);
      }

      @Override
      public void unlocked(String ns, long id, int lockRef) {
        events.add("unlocked #" + id + " ref " + lockRef);
      }
    });
  }

  /** One line per node, indented by depth: every field of the snapshot. */
  static String render(TreeSnapshot s) {
    StringBuilder out = new StringBuilder("clock " + s.clock() + "\n");
    for (TreeSnapshot.Root r : s.roots()) {
      out.append("'").append(r.namespace()).append("' #").append(r.id()).append('\n');
      r.children().forEach(n -> render(n, "  ", out));
    }
    return out.toString();
  }

  private static void render(TreeSnapshot.Node n, String indent, StringBuilder out) {
    out.append(indent).append('#').append(n.id()).append(' ')
        .append(n.tokenIds()[0]).append("..").append(n.tokenIds()[n.tokens() - 1])
        .append(" tokens ").append(n.tokens()).append(" blocks ").append(n.blocks())
        .append(" lock ").append(n.lockRef()).append(" hits ").append(n.hits())
        .append(" last ").append(n.lastAccess()).append(n.evictable() ? " evictable" : "")
        .append('\n');
    n.children().forEach(c -> render(c, indent + "  ", out));
  }

  @Test
  void splitKeepsTheLowerIdAndCopiesStatsToTheUpper() {
    cache.insert(run(100, 12), pool.allocate(3), ""); // root #1, leaf #2: blocks 0, 1, 2
    MatchResult m = cache.matchPrefix(concat(run(100, 6), run(900, 6)), 12, "");
    // token-granular: block 0 whole, then 2 tokens into block 1 (the copy source); each split
    // leaves the lower part #2 its id: #3 takes block 0, #4 takes block 1 alone, so locking
    // m.node() protects the source and locking m.fullBlocksNode() protects only block 0
    assertEquals(6, m.matchedTokens());
    assertEquals(2, m.partialTokens());
    assertEquals(List.of(0, 1), Arrays.stream(m.blockIds()).boxed().toList());
    assertEquals(4, m.node().id());
    assertEquals(3, m.fullBlocksNode().id());
    assertEquals("""
        clock 2
        '' #1
          #3 100..103 tokens 4 blocks 1 lock 0 hits 1 last 2
            #4 104..107 tokens 4 blocks 1 lock 0 hits 1 last 2
              #2 108..111 tokens 4 blocks 1 lock 0 hits 0 last 1 evictable
        """, render(cache.snapshot()));
    assertEquals(List.of("stored '' #2 under #1 path 12 blocks [0, 1, 2]",
        "split '' #2 upper #3 4", "split '' #2 upper #4 4"), events);
  }

  @Test
  void locksShowOnThePathAndEvictionTakesOnlyUnlockedLeaves() {
    int[] trunk = run(1, 8);
    cache.insert(concat(trunk, run(11, 4)), pool.allocate(3), ""); // #2: blocks 0, 1, 2
    int[] shared = {0, 1, pool.allocate(1)[0]}; // the trunk's blocks from a match, then block 3
    InsertResult b = cache.insert(concat(trunk, run(21, 4)), shared, "");
    cache.lock(b.node());
    assertEquals("""
        clock 2
        '' #1
          #3 1..8 tokens 8 blocks 2 lock 1 hits 0 last 2
            #2 11..14 tokens 4 blocks 1 lock 0 hits 0 last 1 evictable
            #4 21..24 tokens 4 blocks 1 lock 1 hits 0 last 2
        """, render(cache.snapshot()));

    assertEquals(1, cache.evict(2)); // only #2 is an unlocked leaf
    cache.unlock(b.node());
    assertEquals("""
        clock 2
        '' #1
          #3 1..8 tokens 8 blocks 2 lock 0 hits 0 last 2
            #4 21..24 tokens 4 blocks 1 lock 0 hits 0 last 2 evictable
        """, render(cache.snapshot()));
    assertEquals(3, cache.evictAll()); // #4, then #3 once it became a leaf
    assertEquals("clock 2\n", render(cache.snapshot()));
    assertEquals(List.of(
        "stored '' #2 under #1 path 12 blocks [0, 1, 2]",
        "split '' #2 upper #3 8",
        "stored '' #4 under #3 path 12 blocks [3]",
        "locked #4 ref 1",
        "evicted '' #2 path 12 blocks [2]",
        "unlocked #4 ref 0",
        "evicted '' #4 path 12 blocks [3]",
        "evicted '' #3 path 8 blocks [0, 1]"), events);
  }

  @Test
  void namespacesAreSeparateRootsWithTheirOwnIdsAndBlocks() {
    int[] prompt = run(1, 8);
    cache.insert(prompt, pool.allocate(2), "tenant-b"); // root #1, leaf #2
    cache.insert(prompt, pool.allocate(2), ""); // root #3, leaf #4
    MatchResult none = cache.matchPrefix(prompt, 8, "tenant-c");
    cache.lock(none.node()); // a root handle: no event, protects nothing
    cache.unlock(none.node());
    cache.matchPrefix(prompt, 8, "");
    assertEquals("""
        clock 3
        '' #3
          #4 1..8 tokens 8 blocks 2 lock 0 hits 1 last 3 evictable
        'tenant-b' #1
          #2 1..8 tokens 8 blocks 2 lock 0 hits 0 last 1 evictable
        """, render(cache.snapshot()));
    assertEquals(List.of("stored 'tenant-b' #2 under #1 path 8 blocks [0, 1]",
        "stored '' #4 under #3 path 8 blocks [2, 3]"), events);
  }

  @Test
  void snapshotArraysAreCopies() {
    cache.insert(run(1, 4), pool.allocate(1), "");
    TreeSnapshot.Node n = cache.snapshot().roots().getFirst().children().getFirst();
    n.tokenIds()[0] = 99;
    assertEquals(1, cache.snapshot().roots().getFirst().children().getFirst().tokenIds()[0]);
  }
}
