package dev.radixserve.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * A working set several times the KV pool, for the cache tiers below it: many long system
 * prompts, each request one of them (drawn Zipf-like, so a few are hot and most come back only
 * after being evicted) plus a question of its own.
 */
final class TierWorkloads {

  static final int SYSTEM_PROMPTS = 64;
  static final int SYSTEM_PROMPT_TOKENS = 1000;
  static final int QUESTION_TOKENS = 16;
  /** Zipf exponent: the hottest prompt draws about 1/5 of the requests, the coldest 1/450. */
  static final double ZIPF_S = 1.1;

  private TierWorkloads() {}

  static Workload zipfSystemPrompts(WorkloadParams p) {
    int n = p.requestsOr(192);
    TokenSource tokens = new TokenSource(p.seed(), "tiered-system-prompts");
    // as long as the context allows, up to 1,000 tokens (GPT-2: 1,024 - question - output)
    int prefix = Math.min(SYSTEM_PROMPT_TOKENS, p.maxModelLen() - QUESTION_TOKENS - p.maxTokens());
    if (prefix < 1) {
      throw new IllegalArgumentException("tiered-system-prompts: --max-tokens " + p.maxTokens()
          + " leaves no room for a system prompt in --max-model-len " + p.maxModelLen());
    }
    List<int[]> systems = new ArrayList<>();
    for (int i = 0; i < SYSTEM_PROMPTS; i++) {
      systems.add(tokens.tokens(prefix));
    }
    double[] cdf = zipfCdf(SYSTEM_PROMPTS, ZIPF_S);
    SplittableRandom draws = new SplittableRandom(p.seed() ^ 0x5DEECE66DL);
    List<int[]> prompts = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      prompts.add(TokenSource.concat(systems.get(draw(cdf, draws.nextDouble())),
          tokens.tokens(QUESTION_TOKENS)));
    }
    return Workload.independent("tiered-system-prompts", n + " requests: one of "
        + SYSTEM_PROMPTS + " distinct " + prefix + "-token system prompts, drawn Zipf (s = "
        + ZIPF_S + "), + a " + QUESTION_TOKENS + "-token question; working set "
        + SYSTEM_PROMPTS * prefix + " tokens, meant for a KV pool of a quarter of it or less"
        + " (e.g. --num-blocks 960 at block size 16) with and without --kv-offload-*", prompts);
  }

  /** {@code cdf[k]}: probability of ranks {@code 0..k}, weights {@code 1 / (k + 1)^s}. */
  static double[] zipfCdf(int n, double s) {
    double[] cdf = new double[n];
    double sum = 0;
    for (int k = 0; k < n; k++) {
      sum += 1 / Math.pow(k + 1, s);
      cdf[k] = sum;
    }
    for (int k = 0; k < n; k++) {
      cdf[k] /= sum;
    }
    return cdf;
  }

  static int draw(double[] cdf, double u) {
    for (int k = 0; k < cdf.length; k++) {
      if (u < cdf[k]) {
        return k;
      }
    }
    return cdf.length - 1;
  }
}
