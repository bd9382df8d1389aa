package dev.radixserve.cache;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/**
 * Random operation sequences against a caller model and the independent {@link PageOracle}:
 * requests start (match to the token, lock the whole blocks, lock the copy source while a match
 * ends inside a block, allocate the rest, evicting when short), finish their copy (unlock the
 * source), finish (insert every token, partial last block included, or whole blocks only and
 * free the partial one; free duplicates, lock the new end, unlock, maybe start a follow-up turn),
 * abort (free, unlock); plain matches, evictions and full resets in between. Token streams use a
 * 3-letter alphabet and a few shared prefixes, so prefixes, pages, partial pages and splits are
 * shared heavily. After every operation: {@code checkIntegrity(inUse)}, the oracle's page count
 * equals the cache's block count, and every match, insert and eviction agreed with the oracle.
 *
 * <p>300 tries × at least 100 operations: at least 30,000 operations per run (about a second).
 */
class RadixCachePropertyTest {

  record Op(int kind, int a, int b, int c) {}

  private static final class Request {
    String ns;
    int[] tokens;
    MatchResult match;
    PageOracle.Match expected;
    boolean copying;
    int[] fresh;
  }

  @Provide
  Arbitrary<List<Op>> ops() {
    Arbitrary<Integer> any = Arbitraries.integers().between(0, 1 << 20);
    return Combinators.combine(Arbitraries.integers().between(0, 99), any, any, any)
        .as(Op::new).list().ofMinSize(100).ofMaxSize(140);
  }

  @Provide
  Arbitrary<Integer> pageSizes() {
    return Arbitraries.of(1, 2, 3, 4);
  }

  @Property(tries = 300)
  void cacheAgreesWithTheOracleAfterEveryOperation(
      @ForAll("ops") List<Op> ops,
      @ForAll("pageSizes") int pageSize,
      @ForAll PageOracle.Policy policy,
      @ForAll @IntRange(min = 6, max = 40) int poolSize,
      @ForAll long seed) {
    new Run(pageSize, policy, poolSize, seed).play(ops);
  }

  private static final class Run {
    final int pageSize;
    final BlockPool pool;
    final RadixCache cache;
    final PageOracle oracle;
    final int[][] prefixes = new int[4][];
    final List<Request> running = new ArrayList<>();
    final List<int[]> finished = new ArrayList<>();
    int inUse;
    int reportedFreed;

    Run(int pageSize, PageOracle.Policy policy, int poolSize, long seed) {
      this.pageSize = pageSize;
      this.pool = new BlockPool(poolSize);
      EvictionPolicy p = switch (policy) {
        case LRU -> EvictionPolicy.lru();
        case LFU -> EvictionPolicy.lfu();
        case PRIORITY -> EvictionPolicy.priority();
      };
      this.cache = new RadixCache(pool, pageSize, p);
      this.oracle = new PageOracle(pageSize, policy);
      cache.addListener(new CacheListener() {
        @Override
        public void evicted(String ns, long id, int[] path, int[] blocks) {
          oracle.evicted(ns, path, blocks);
          reportedFreed += blocks.length;
        }
      });
      Random random = new Random(seed);
      for (int i = 0; i < prefixes.length; i++) {
        prefixes[i] = random.ints(48, 0, 3).toArray();
      }
    }

    void play(List<Op> ops) {
      for (int i = 0; i < ops.size(); i++) {
        Op op = ops.get(i);
        try {
          apply(op);
          cache.checkIntegrity(inUse);
          assertEquals(oracle.storedPages(), cache.cachedBlocks(), "cached blocks vs oracle");
        } catch (RuntimeException | AssertionError e) {
          throw new AssertionError("operation " + i + " " + op + " failed: " + e, e);
        }
      }
      while (!running.isEmpty()) {
        abort(running.getLast());
      }
      cache.evictAll();
      cache.checkIntegrity(0);
      assertEquals(0, cache.cachedBlocks());
      assertEquals(pool.total(), pool.freeCount());
    }

    void apply(Op op) {
      int k = op.kind();
      if (k < 22) {
        start(tokens(op), namespace(op));
      } else if (k < 25 && !finished.isEmpty()) { // a repeat: all but its last token cached
        int[] again = finished.get(op.a() % finished.size());
        start(again, namespace(op));
      } else if (k < 28 && !running.isEmpty()) { // a longer request beside a running one
        Request r = running.get(op.a() % running.size());
        int[] tail = new Random(op.c()).ints(1 + op.b() % 9, 0, 3).toArray();
        int[] longer = Arrays.copyOf(r.tokens, r.tokens.length + tail.length);
        System.arraycopy(tail, 0, longer, r.tokens.length, tail.length);
        start(longer, r.ns);
      } else if (k < 34 && !running.isEmpty()) {
        copied(running.get(op.a() % running.size()));
      } else if (k < 52 && !running.isEmpty()) {
        finish(running.get(op.a() % running.size()), op);
      } else if (k < 60 && !running.isEmpty()) {
        abort(running.get(op.a() % running.size()));
      } else if (k < 72) {
        evict(1 + op.b() % 8);
      } else if (k < 98) {
        int[] t = tokens(op);
        int length = op.c() % (t.length + 1);
        assertMatch(oracle.match(t, length, namespace(op)), cache.matchPrefix(t, length,
            namespace(op)));
      } else {
        reportedFreed = 0;
        int freed = cache.evictAll();
        assertEquals(reportedFreed, freed, "evictAll return vs evicted nodes");
        assertEquals(0, cache.evictableBlocks());
      }
    }

    int[] tokens(Op op) {
      int[] prefix = prefixes[op.a() % prefixes.length];
      int prefixLength = (op.a() / 4) % (prefix.length + 1);
      int[] tail = new Random(op.c()).ints(1 + op.b() % 20, 0, 3).toArray();
      int[] t = Arrays.copyOf(prefix, prefixLength + tail.length);
      System.arraycopy(tail, 0, t, prefixLength, tail.length);
      return t;
    }

    static String namespace(Op op) {
      return op.b() % 7 == 0 ? "tenant" : "";
    }

    void evict(int n) {
      reportedFreed = 0;
      int freed = cache.evict(n);
      assertEquals(reportedFreed, freed, "evict return vs evicted nodes");
      assertTrue(freed >= n || cache.evictableBlocks() == 0,
          "evicted " + freed + " of " + n + " with " + cache.evictableBlocks() + " evictable");
    }

    void assertMatch(PageOracle.Match expected, MatchResult m) {
      assertArrayEquals(expected.ids(), m.blockIds(), "matched ids");
      assertEquals(expected.tokens(), m.matchedTokens(), "matched tokens");
      assertEquals(expected.partial(), m.partialTokens(), "tokens in the copy source");
      assertEquals(m.matchedTokens() % pageSize, m.partialTokens());
    }

    void start(int[] tokens, String ns) {
      MatchResult m = cache.matchPrefix(tokens, tokens.length - 1, ns);
      PageOracle.Match expected = oracle.match(tokens, tokens.length - 1, ns);
      assertMatch(expected, m);
      cache.lock(m.fullBlocksNode());
      oracle.lock(expected.whole(), 1);
      if (m.endsInsideBlock()) { // the copy source stays locked until the copy is done
        cache.lock(m.node());
        oracle.lock(expected.all(), 1);
      }
      int whole = expected.whole().size();
      int need = (tokens.length + pageSize - 1) / pageSize - whole;
      if (!pool.canAllocate(need)) {
        evict(need - pool.freeCount());
      }
      if (!pool.canAllocate(need)) { // rejected: too little unlocked cache to make room
        unlockMatch(m, expected, m.endsInsideBlock());
        return;
      }
      Request r = new Request();
      r.ns = ns;
      r.tokens = tokens;
      r.match = m;
      r.expected = expected;
      r.copying = m.endsInsideBlock();
      r.fresh = pool.allocate(need);
      inUse += need;
      running.add(r);
    }

    void copied(Request r) {
      if (r.copying) {
        r.copying = false;
        cache.unlock(r.match.node());
        oracle.lock(r.expected.all(), -1);
      }
    }

    void unlockMatch(MatchResult m, PageOracle.Match expected, boolean copying) {
      if (copying) {
        cache.unlock(m.node());
        oracle.lock(expected.all(), -1);
      }
      cache.unlock(m.fullBlocksNode());
      oracle.lock(expected.whole(), -1);
    }

    void finish(Request r, Op op) {
      running.remove(r);
      finished.add(r.tokens);
      if (op.c() % 2 == 0) {
        copied(r); // else the insert happens while the copy source is still locked
      }
      int[] own = r.match.fullBlockIds();
      int[] ids = Arrays.copyOf(own, own.length + r.fresh.length);
      System.arraycopy(r.fresh, 0, ids, own.length, r.fresh.length);
      int length = r.tokens.length; // every token, the partial last block included
      if (op.c() % 4 == 1) { // whole blocks only: the caller frees its partial last block
        length -= length % pageSize;
      } else if (op.c() % 4 == 3) { // a prefix, maybe ending inside a block the tree lent it
        length = 1 + op.a() % length;
      }
      int kept = (length + pageSize - 1) / pageSize - own.length;
      pool.free(Arrays.copyOfRange(r.fresh, Math.max(0, kept), r.fresh.length));
      inUse -= r.fresh.length - Math.max(0, kept);
      ids = Arrays.copyOf(ids, (length + pageSize - 1) / pageSize);
      int priority = op.c() % 3;
      PageOracle.Insert expected = oracle.insert(r.tokens, length, ids, r.ns, priority);
      InsertResult result = cache.insert(r.tokens, length, ids, r.ns, priority);
      assertArrayEquals(expected.duplicates(), result.duplicateBlockIds(), "duplicates");
      assertEquals(expected.alreadyCached(), result.alreadyCachedTokens(), "already cached");
      pool.free(result.duplicateBlockIds());
      inUse -= Math.max(0, kept);
      cache.lock(result.node());
      oracle.lock(expected.path(), 1);
      unlockMatch(r.match, r.expected, r.copying);
      if (op.b() % 3 == 0) { // the next turn of the conversation, while this one stays locked
        int[] tail = new Random(op.a()).ints(1 + op.c() % 12, 0, 3).toArray();
        int[] next = Arrays.copyOf(r.tokens, r.tokens.length + tail.length);
        System.arraycopy(tail, 0, next, r.tokens.length, tail.length);
        start(next, r.ns);
      }
      cache.unlock(result.node());
      oracle.lock(expected.path(), -1);
    }

    void abort(Request r) {
      running.remove(r);
      pool.free(r.fresh);
      inUse -= r.fresh.length;
      unlockMatch(r.match, r.expected, r.copying);
    }
  }
}
