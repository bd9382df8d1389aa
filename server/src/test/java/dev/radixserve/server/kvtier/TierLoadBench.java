package dev.radixserve.server.kvtier;

import dev.radixserve.cache.BlockPool;
import dev.radixserve.cache.EvictionPolicy;
import dev.radixserve.cache.RadixCache;
import dev.radixserve.model.ForwardBatch;
import dev.radixserve.model.ModelConfig;
import dev.radixserve.model.OnnxModelRunner;
import dev.radixserve.model.weights.GptWeights;
import dev.radixserve.model.weights.RandomGpt2;
import dev.radixserve.server.engine.BlockTiers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

/**
 * What a 1,000-token prefix costs to compute against what it costs to load from each tier, on
 * the runner alone (no server, no scheduling). Run as a main class (docs/benchmarks/journal/2026-11-21-to-28.md has the
 * command):
 *
 * <pre>
 *   TierLoadBench [embedded|gpt2-small] [intra-op threads = 2] [repeats = 5]
 * </pre>
 *
 * Prefill: the 1,000 tokens in chunks of 512 (the server's default prefill chunk), each repeat on
 * a fresh range of blocks. Load: the 62 whole blocks of the prefix from the host tier, and from
 * the disk tier (files just written, so most likely from the page cache: the cost of a warm
 * restart's reads, not of a cold disk), into pool blocks, as the loader thread does. Medians.
 */
public final class TierLoadBench {

  private static final int B = 16;
  private static final int TOKENS = 1000;
  private static final int CHUNK = 512;

  public static void main(String[] args) throws Exception {
    String model = args.length > 0 ? args[0] : "embedded";
    int threads = args.length > 1 ? Integer.parseInt(args[1]) : 2;
    int repeats = args.length > 2 ? Integer.parseInt(args[2]) : 5;
    ModelConfig config = switch (model) {
      case "embedded" -> ModelConfig.embeddedDefault();
      case "gpt2-small" -> new ModelConfig(12, 12, 768, 1024, 50257, 1e-5, "gelu_new");
      default -> throw new IllegalArgumentException("model: embedded or gpt2-small");
    };
    int perPrompt = (TOKENS + B - 1) / B;
    int[] prompt = new Random(7).ints(TOKENS, 0, 50256).toArray();
    Path dir = Files.createTempDirectory("radixserve-tier-bench");
    try (GptWeights weights = RandomGpt2.create(config, 0);
        OnnxModelRunner runner =
            OnnxModelRunner.create(weights, B, perPrompt * (repeats + 3), threads)) {
      long blockBytes = runner.kvPool().bytesPerBlock();
      double[] prefill = new double[repeats + 1];
      for (int r = 0; r <= repeats; r++) { // the first is a warm-up
        int[] table = range(r * perPrompt, perPrompt);
        long t0 = System.nanoTime();
        for (int from = 0; from < TOKENS; from += CHUNK) {
          int to = Math.min(TOKENS, from + CHUNK);
          runner.forward(new ForwardBatch(List.of(new ForwardBatch.Seq(
              Arrays.copyOfRange(prompt, from, to), from, table))));
        }
        prefill[r] = (System.nanoTime() - t0) / 1e6;
      }
      // the first prefill's blocks go into a cache, then down into both tiers
      int whole = TOKENS / B;
      BlockPool pool = new BlockPool(runner.numBlocks());
      int[] ids = pool.allocate(whole);
      if (ids[0] != 0 || ids[whole - 1] != whole - 1) {
        throw new IllegalStateException("expected blocks 0.." + (whole - 1));
      }
      RadixCache cache = new RadixCache(pool, B, EvictionPolicy.lru());
      cache.insert(prompt, whole * B, ids, "");
      int[] into = range((repeats + 1) * perPrompt, whole);
      try (KvTiers both = KvTiers.create(2 * whole * blockBytes, dir, 4 * whole * (blockBytes
          + 4096), DiskWritePolicy.ALL, runner.kvPool(), "bench", model, B)) {
        cache.addListener(both);
        cache.evictAll();
      } // closing waits for the disk writes
      double[] host = new double[repeats + 1];
      double[] disk = new double[repeats + 1];
      try (KvTiers hostOnly = KvTiers.create(2 * whole * blockBytes, null, 1, DiskWritePolicy.ALL,
          runner.kvPool(),
              "bench", model, B);
          KvTiers diskOnly = KvTiers.create(0, dir, 4 * whole * (blockBytes + 4096), DiskWritePolicy.ALL,
              runner.kvPool(), "bench", model, B)) {
        BlockPool pool2 = new BlockPool(runner.numBlocks());
        RadixCache cache2 = new RadixCache(pool2, B, EvictionPolicy.lru());
        cache2.addListener(hostOnly);
        cache2.insert(prompt, whole * B, pool2.allocate(whole), ""); // blocks 0..61 again
        cache2.evictAll();
        for (int r = 0; r <= repeats; r++) {
          host[r] = load(hostOnly, prompt, whole, into);
          disk[r] = load(diskOnly, prompt, whole, into);
        }
      }
      double p = median(prefill);
      double h = median(host);
      double d = median(disk);
      System.out.printf("model %s (%d layers, width %d), %d threads; block of %d tokens = %,d bytes;"
          + " %d-token prefix, %d whole blocks (%.1f MB)%n", model, config.nLayer(),
          config.nEmbd(), threads, B, blockBytes, TOKENS, whole, whole * blockBytes / 1e6);
      System.out.printf("prefill (recompute)  median %8.1f ms   all %s%n", p, Arrays.toString(prefill));
      System.out.printf("load from host tier  median %8.1f ms   all %s   %.3fx prefill%n", h,
          Arrays.toString(host), h / p);
      System.out.printf("load from disk tier  median %8.1f ms   all %s   %.3fx prefill%n", d,
          Arrays.toString(disk), d / p);
    } finally {
      try (var files = Files.list(dir)) {
        for (Path f : files.toList()) {
          Files.delete(f);
        }
      }
      Files.delete(dir);
    }
  }

  private static double load(KvTiers tiers, int[] prompt, int whole, int[] into) {
    long t0 = System.nanoTime();
    BlockTiers.TierHits hits = tiers.find("", prompt, 0, whole);
    if (hits.count() != whole) {
      throw new IllegalStateException("found " + hits.count() + " of " + whole + " blocks");
    }
    for (int i = 0; i < whole; i++) {
      if (!hits.load(i, into[i])) {
        throw new IllegalStateException("block " + i + " did not load");
      }
    }
    return (System.nanoTime() - t0) / 1e6;
  }

  private static int[] range(int from, int n) {
    int[] ids = new int[n];
    for (int i = 0; i < n; i++) {
      ids[i] = from + i;
    }
    return ids;
  }

  private static double median(double[] withWarmup) {
    double[] xs = Arrays.copyOfRange(withWarmup, 1, withWarmup.length);
    Arrays.sort(xs);
    return xs[xs.length / 2];
  }
}
