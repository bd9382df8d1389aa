package dev.radixserve.cache;

import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * JMH benchmarks (run only by the {@code jmh} profile, see docs/benchmarks/journal/2026-11-21-to-28.md). The tree holds 10,000
 * cached sequences of B = 16: each is one of 50 shared 2,048-token prefixes plus a unique tail of
 * 64 to 320 tokens (the 50 prefixes are locked, as by running requests); long prompts of
 * 1k, 8k and 32k tokens extend shared prefixes.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class RadixCacheBenchmark {

  private static final int B = 16;
  private static final int SEQUENCES = 10_000;
  private static final int PREFIXES = 50;
  private static final int PREFIX_TOKENS = 2048;

  private BlockPool pool;
  private RadixCache cache;
  private int[] prompt1k;
  private int[] prompt8k;
  private int[] prompt32k;
  private int[] ids32k;
  private NodeHandle end32k;
  private int[][] prefixes;
  private Random random;

  @Setup(Level.Trial)
  public void buildTree() {
    random = new Random(42);
    pool = new BlockPool(400_000);
    cache = new RadixCache(pool, B, EvictionPolicy.lru());
    prefixes = new int[PREFIXES][];
    for (int p = 0; p < PREFIXES; p++) {
      prefixes[p] = random.ints(PREFIX_TOKENS, 0, 50_000).toArray();
    }
    for (int s = 0; s < SEQUENCES; s++) {
      insertFresh(withTail(prefixes[s % PREFIXES], 64 + random.nextInt(257)));
    }
    prompt1k = java.util.Arrays.copyOf(prefixes[1], 1024); // a prefix of a shared prefix
    prompt8k = withTail(prefixes[2], 8192 - PREFIX_TOKENS);
    prompt32k = withTail(prefixes[3], 32768 - PREFIX_TOKENS);
    insertFresh(prompt8k);
    end32k = insertFresh(prompt32k).node();
    ids32k = cache.matchPrefix(prompt32k, prompt32k.length, "").blockIds();
    for (int[] prefix : prefixes) { // pinned system prompts: the eviction state stays steady
      cache.lock(cache.matchPrefix(prefix, prefix.length, "").node());
    }
    cache.checkIntegrity(0);
  }

  private int[] withTail(int[] prefix, int tailLength) {
    int[] t = java.util.Arrays.copyOf(prefix, prefix.length + tailLength);
    for (int i = prefix.length; i < t.length; i++) {
      t[i] = random.nextInt(50_000);
    }
    return t;
  }

  private InsertResult insertFresh(int[] tokens) {
    int pages = tokens.length / B;
    MatchResult m = cache.matchPrefix(tokens, tokens.length, "");
    int cached = m.matchedTokens() / B;
    int[] ids = java.util.Arrays.copyOf(m.blockIds(), pages);
    int[] fresh = pool.allocate(pages - cached);
    System.arraycopy(fresh, 0, ids, cached, fresh.length);
    InsertResult r = cache.insert(tokens, ids, "");
    pool.free(r.duplicateBlockIds());
    return r;
  }

  @Benchmark
  public MatchResult match1k() {
    return cache.matchPrefix(prompt1k, prompt1k.length, "");
  }

  @Benchmark
  public MatchResult match8k() {
    return cache.matchPrefix(prompt8k, prompt8k.length, "");
  }

  @Benchmark
  public MatchResult match32k() {
    return cache.matchPrefix(prompt32k, prompt32k.length, "");
  }

  /** Insert of a 32k-token prompt whose blocks the tree already holds (the finish path). */
  @Benchmark
  public InsertResult insert32k() {
    return cache.insert(prompt32k, ids32k, "");
  }

  @Benchmark
  public NodeHandle lockUnlock() {
    cache.lock(end32k);
    cache.unlock(end32k);
    return end32k;
  }

  /** Adds 1,000 fresh blocks: 100 sequences of a pinned prefix plus 10 unique pages. */
  void refill1000() {
    for (int added = 0; added < 1000; added += 10) {
      insertFresh(withTail(prefixes[random.nextInt(PREFIXES)], 160));
    }
  }

  RadixCache cache() {
    return cache;
  }
}
