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
 * requests start (match, lock, allocate, evicting when short), finish (insert, free duplicates
 * and the partial last block, lock the new end, unlock the match, maybe start a follow-up turn),
 * abort (free, unlock); plain matches, evictions and full resets in between. Token streams use a
 * 3-letter alphabet and a few shared prefixes, so prefixes, pages and splits are shared heavily.
 * After every operation: {@code checkIntegrity(inUse)}, the oracle's page count equals the
 * cache's block count, and every match, insert and eviction agreed with the oracle.
 *
 * <p>100 tries × at least 100 operations: at least 10,000 operations per run.
 */
class RadixCachePropertyTest {

  record Op(int kind, int a, int b, int c) {}

  private static final class Request {
    String ns;
    int[] tokens;
    NodeHandle node;
    int matchedPages;
    int[] matchedIds;
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
    return Arbitraries.of(1, 2, 4);
  }

  @Property(tries = 100)
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
      if (k < 30) {
        start(tokens(op), namespace(op));
      } else if (k < 52 && !running.isEmpty()) {
        finish(running.get(op.a() % running.size()), op);
      } else if (k < 60 && !running.isEmpty()) {
        abort(running.get(op.a() % running.size()));
      } else if (k < 72) {
        evict(1 + op.b() % 8);
      } else if (k < 98) {
        int[] t = tokens(op);
        int length = op.c() % (t.length + 1);
        MatchResult m = cache.matchPrefix(t, length, namespace(op));
        int[] expected = oracle.match(t, length, namespace(op));
        assertArrayEquals(expected, m.blockIds(), "matched ids");
        assertEquals(expected.length * pageSize, m.matchedTokens());
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

    void start(int[] tokens, String ns) {
      MatchResult m = cache.matchPrefix(tokens, tokens.length - 1, ns);
      int[] expected = oracle.match(tokens, tokens.length - 1, ns);
      assertArrayEquals(expected, m.blockIds(), "matched ids");
      assertEquals(expected.length * pageSize, m.matchedTokens());
      cache.lock(m.node());
      oracle.lock(tokens, expected.length, ns, 1);
      int need = (tokens.length + pageSize - 1) / pageSize - expected.length;
      if (!pool.canAllocate(need)) {
        evict(need - pool.freeCount());
      }
      if (!pool.canAllocate(need)) { // rejected: too little unlocked cache to make room
        cache.unlock(m.node());
        oracle.lock(tokens, expected.length, ns, -1);
        return;
      }
      Request r = new Request();
      r.ns = ns;
      r.tokens = tokens;
      r.node = m.node();
      r.matchedPages = expected.length;
      r.matchedIds = m.blockIds();
      r.fresh = pool.allocate(need);
      inUse += need;
      running.add(r);
    }

    void finish(Request r, Op op) {
      running.remove(r);
      int fullPages = r.tokens.length / pageSize;
      int inserted = fullPages - r.matchedPages;
      int[] ids = Arrays.copyOf(r.matchedIds, fullPages);
      System.arraycopy(r.fresh, 0, ids, r.matchedPages, inserted);
      pool.free(Arrays.copyOfRange(r.fresh, inserted, r.fresh.length)); // partial last page
      inUse -= r.fresh.length - inserted;
      int priority = op.c() % 3;
      int[] cached = new int[1];
      int[] expectedDuplicates = oracle.insert(r.tokens, ids, r.ns, priority, cached);
      InsertResult result = cache.insert(r.tokens, ids, r.ns, priority);
      assertArrayEquals(expectedDuplicates, result.duplicateBlockIds(), "duplicates");
      assertEquals(cached[0], result.alreadyCachedTokens(), "already cached tokens");
      pool.free(result.duplicateBlockIds());
      inUse -= inserted;
      cache.lock(result.node());
      oracle.lock(r.tokens, fullPages, r.ns, 1);
      cache.unlock(r.node);
      oracle.lock(r.tokens, r.matchedPages, r.ns, -1);
      if (op.b() % 3 == 0) { // the next turn of the conversation, while this one stays locked
        int[] tail = new Random(op.a()).ints(1 + op.c() % 12, 0, 3).toArray();
        int[] next = Arrays.copyOf(r.tokens, r.tokens.length + tail.length);
        System.arraycopy(tail, 0, next, r.tokens.length, tail.length);
        start(next, r.ns);
      }
      cache.unlock(result.node());
      oracle.lock(r.tokens, fullPages, r.ns, -1);
    }

    void abort(Request r) {
      running.remove(r);
      pool.free(r.fresh);
      inUse -= r.fresh.length;
      cache.unlock(r.node);
      oracle.lock(r.tokens, r.matchedPages, r.ns, -1);
    }
  }
}
