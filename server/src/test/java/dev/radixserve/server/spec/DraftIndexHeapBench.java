package dev.radixserve.server.spec;

import java.lang.ref.Reference;
import java.util.Random;

/**
 * What a sequence's own draft indexes ({@link PromptLookup}, {@link ShortKeyLookup}) hold on the
 * heap and cost to build, per position: a prompt of N tokens indexed at once, as the first
 * decode step of a long prompt does. Tokens are drawn Zipf-like (rank r with weight 1/r) over a
 * vocabulary of V ids, so runs repeat about as rarely as in text that does not quote itself.
 * Run as a main class (no assertions; numbers for the journal):
 *
 * <pre>
 *   DraftIndexHeapBench [tokens = 131072] [vocab = 128256] [repeats = 3]
 * </pre>
 */
public final class DraftIndexHeapBench {

  private DraftIndexHeapBench() {}

  public static void main(String[] args) {
    int n = args.length > 0 ? Integer.parseInt(args[0]) : 131_072;
    int vocab = args.length > 1 ? Integer.parseInt(args[1]) : 128_256;
    int repeats = args.length > 2 ? Integer.parseInt(args[2]) : 3;
    int[] tokens = zipf(n, vocab, new Random(1));
    System.out.printf("%d tokens, vocabulary %d%n", n, vocab);
    for (int r = 0; r < repeats; r++) {
      long before = usedAfterGc();
      long t0 = System.nanoTime();
      PromptLookup prompt = new PromptLookup();
      prompt.propose(tokens, n, 8);
      long t1 = System.nanoTime();
      long afterPrompt = usedAfterGc();
      ShortKeyLookup shortKey = new ShortKeyLookup();
      long t2 = System.nanoTime();
      shortKey.proposeByUniquePair(tokens, n, 8);
      long t3 = System.nanoTime();
      long afterShort = usedAfterGc();
      System.out.printf("PromptLookup %.1f B/position, %.1f ms; ShortKeyLookup %.1f B/position,"
          + " %.1f ms%n", (afterPrompt - before) / (double) n, (t1 - t0) / 1e6,
          (afterShort - afterPrompt) / (double) n, (t3 - t2) / 1e6);
      // both measured alive: not collected before the last usedAfterGc
      Reference.reachabilityFence(prompt);
      Reference.reachabilityFence(shortKey);
    }
  }

  static int[] zipf(int n, int vocab, Random random) {
    double[] cumulative = new double[vocab];
    double sum = 0;
    for (int r = 0; r < vocab; r++) {
      sum += 1.0 / (r + 1);
      cumulative[r] = sum;
    }
    int[] tokens = new int[n];
    for (int i = 0; i < n; i++) {
      double u = random.nextDouble() * sum;
      int lo = java.util.Arrays.binarySearch(cumulative, u);
      tokens[i] = lo >= 0 ? lo : -lo - 1;
    }
    return tokens;
  }

  private static long usedAfterGc() {
    Runtime rt = Runtime.getRuntime();
    for (int i = 0; i < 4; i++) {
      System.gc();
    }
    return rt.totalMemory() - rt.freeMemory();
  }
}
