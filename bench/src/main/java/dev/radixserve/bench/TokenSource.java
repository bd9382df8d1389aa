package dev.radixserve.bench;

import java.util.SplittableRandom;

/**
 * Seeded source of token ids within GPT-2's vocabulary. Two sources with the same seed and
 * workload name yield the same ids; random 50,256-way ids make accidental shared prefixes of a whole block vanishingly
 * rare, so the only sharing in a workload is the sharing it builds on purpose.
 */
final class TokenSource {

  /** Ids are drawn from [0, VOCAB_SIZE): GPT-2's vocabulary without its end-of-text token. */
  static final int VOCAB_SIZE = 50256;

  private final SplittableRandom random;

  /**
   * @param seed the run's {@code --seed}
   * @param workload mixed into the seed so that two workloads run against one server never share
   *     prefixes by accident (their first ids would otherwise be the same)
   */
  TokenSource(long seed, String workload) {
    this.random = new SplittableRandom(seed * 0x9E3779B97F4A7C15L + workload.hashCode());
  }

  int[] tokens(int count) {
    if (count < 0) {
      throw new IllegalArgumentException("token count must be >= 0, got " + count);
    }
    int[] ids = new int[count];
    for (int i = 0; i < count; i++) {
      ids[i] = random.nextInt(VOCAB_SIZE);
    }
    return ids;
  }

  /** A fixed, reproducible stand-in for a model answer of {@code count} tokens. */
  int[] syntheticAnswer(int count) {
    return tokens(count);
  }

  static int[] concat(int[]... parts) {
    int n = 0;
    for (int[] p : parts) {
      n += p.length;
    }
    int[] out = new int[n];
    int at = 0;
    for (int[] p : parts) {
      System.arraycopy(p, 0, out, at, p.length);
      at += p.length;
    }
    return out;
  }
}
