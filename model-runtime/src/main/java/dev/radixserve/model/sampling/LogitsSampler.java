package dev.radixserve.model.sampling;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * The {@link Sampler} of one sequence. Order of operations on the logits (vLLM's):
 *
 * <ol>
 *   <li>{@link LogitRules}: allowed tokens, bad words, min tokens, logit bias;
 *   <li>repetition penalty (HF): a token seen in prompt or output has its logit divided by p if
 *       positive, multiplied by p otherwise;
 *   <li>presence / frequency penalties (OpenAI): {@code logit -= presence * [count > 0] +
 *       frequency * count}, over output tokens only;
 *   <li>temperature 0: argmax, ties to the lowest id; otherwise divide by the temperature;
 *   <li>min-p: drop tokens with probability below minP times the largest;
 *   <li>top-k: keep the k most likely (ties to lower ids);
 *   <li>top-p: keep the smallest most-likely-first set whose mass reaches p (at least one);
 *   <li>draw from the softmax of what is left with this sequence's PRNG.
 * </ol>
 *
 * Logprobs are those of the raw model distribution: log-softmax of the logits as given, before
 * penalties, temperature and filters. Top alternatives are best first, ties to lower ids; tokens
 * ruled out by a -inf logit (a structured-output mask) are never alternatives, so there may be
 * fewer than asked.
 *
 * <p>Cost with top-k and top-p off: a few linear passes over the vocabulary, no sort. Top-k alone
 * is a heap selection; top-p sorts the surviving candidates.
 */
public final class LogitsSampler implements Sampler {

  private final SamplingParams params;
  private final int vocabSize;
  private final SplittableRandom random;
  private final BitSet seen = new BitSet(); // prompt and output tokens, for the repetition penalty
  private final Map<Integer, Integer> outputCounts = new HashMap<>();
  private int[] output = new int[16]; // the output so far, for bad words
  private int outputLength;

  public LogitsSampler(SamplingParams params, int vocabSize) {
    if (vocabSize <= 0) {
      throw new IllegalArgumentException("vocab size must be positive, got " + vocabSize);
    }
    this.params = params;
    this.vocabSize = vocabSize;
    this.random = params.seed() != null ? new SplittableRandom(params.seed()) : new SplittableRandom();
  }

  /** Whether generation stops after this token ({@link SamplingParams#stopTokenIds()}). */
  public boolean isStop(int tokenId) {
    return params.stopTokenIds().contains(tokenId);
  }

  @Override
  public void accept(int tokenId, boolean isPrompt) {
    if (tokenId < 0 || tokenId >= vocabSize) {
      throw new IllegalArgumentException("token id " + tokenId + " outside vocabulary of " + vocabSize);
    }
    seen.set(tokenId);
    if (!isPrompt) {
      outputCounts.merge(tokenId, 1, Integer::sum);
      if (!params.rules().badWords().isEmpty() && outputLength == output.length) {
        output = Arrays.copyOf(output, output.length * 2);
      }
      if (!params.rules().badWords().isEmpty()) {
        output[outputLength] = tokenId;
      }
      outputLength++;
    }
  }

  @Override
  public SampledToken sample(float[] logits) {
    if (logits.length != vocabSize) {
      throw new IllegalArgumentException("logits have " + logits.length + " entries, vocabulary " + vocabSize);
    }
    boolean wantLogprobs = params.logprobs() || params.topLogprobs() > 0;
    double rawLogZ = wantLogprobs ? logSumExp(logits) : Double.NaN;
    List<SampledToken.TokenLogprob> top = params.topLogprobs() > 0
        ? topLogprobs(logits, params.topLogprobs(), rawLogZ) : List.of();
    float[] raw = wantLogprobs ? logits.clone() : null;
    applyPenalties(logits);
    int token = params.isGreedy() ? argmax(logits) : filtered(logits).draw(random.nextDouble());
    float logprob = wantLogprobs ? (float) (raw[token] - rawLogZ) : Float.NaN;
    return new SampledToken(token, logprob, top);
  }

  /**
   * The log-probability of {@code tokenId} under the raw distribution of {@code logits}, with the
   * {@code top} most likely tokens (prompt logprobs: a prompt token is scored, not sampled).
   */
  public static SampledToken score(float[] logits, int tokenId, int top) {
    double logZ = logSumExp(logits);
    return new SampledToken(tokenId, (float) (logits[tokenId] - logZ),
        top > 0 ? topLogprobs(logits, top, logZ) : List.of());
  }

  private void applyPenalties(float[] logits) {
    if (!params.rules().isNone()) {
      params.rules().apply(logits, output, outputLength);
    }
    double rep = params.repetitionPenalty();
    if (rep != 1) {
      for (int id = seen.nextSetBit(0); id >= 0; id = seen.nextSetBit(id + 1)) {
        logits[id] = (float) (logits[id] > 0 ? logits[id] / rep : logits[id] * rep);
      }
    }
    double presence = params.presencePenalty();
    double frequency = params.frequencyPenalty();
    if (presence != 0 || frequency != 0) {
      outputCounts.forEach((id, count) -> logits[id] = (float) (logits[id] - presence - frequency * count));
    }
  }

  /** The index of the largest logit, the lowest on ties. */
  public static int argmax(float[] logits) {
    int best = 0;
    for (int i = 1; i < logits.length; i++) {
      if (logits[i] > logits[best]) {
        best = i;
      }
    }
    return best;
  }

  /**
   * The distribution {@link #sample} draws from for {@code logits}, after the rules, penalties,
   * temperature and filters (all the mass on the argmax when greedy); draws nothing, so the
   * sampler's random sequence is untouched. {@code logits} is changed in place, as by sample.
   */
  public TokenDistribution distribution(float[] logits) {
    if (logits.length != vocabSize) {
      throw new IllegalArgumentException("logits have " + logits.length + " entries, vocabulary " + vocabSize);
    }
    applyPenalties(logits);
    return params.isGreedy() ? TokenDistribution.point(argmax(logits)) : filtered(logits);
  }

  private TokenDistribution filtered(float[] logits) {
    double t = params.temperature();
    float max = Float.NEGATIVE_INFINITY;
    for (int i = 0; i < logits.length; i++) {
      logits[i] = (float) (logits[i] / t);
      max = Math.max(max, logits[i]);
    }
    // min-p in log space: p_i >= minP * p_max  <=>  logit_i >= max + ln(minP)
    double floor = params.minP() > 0 ? max + Math.log(params.minP()) : Double.NEGATIVE_INFINITY;
    int[] candidates = candidates(logits, floor);
    if (params.topK() > 0 && params.topK() < candidates.length) {
      candidates = topK(logits, candidates, params.topK());
    }
    double[] weights = new double[candidates.length];
    double total = 0;
    for (int i = 0; i < candidates.length; i++) {
      weights[i] = Math.exp(logits[candidates[i]] - max);
      total += weights[i];
    }
    if (params.topP() < 1) {
      int[] order = sortedByLogit(logits, candidates);
      double[] ordered = new double[order.length];
      double mass = 0;
      int keep = 0;
      while (keep < order.length && (keep == 0 || mass < params.topP() * total)) {
        ordered[keep] = Math.exp(logits[order[keep]] - max);
        mass += ordered[keep];
        keep++;
      }
      candidates = Arrays.copyOf(order, keep);
      weights = Arrays.copyOf(ordered, keep);
      total = mass;
    }
    return new TokenDistribution(candidates, weights, total);
  }

  private static int[] candidates(float[] logits, double floor) {
    int[] out = new int[logits.length];
    int n = 0;
    for (int i = 0; i < logits.length; i++) {
      if (logits[i] >= floor && logits[i] != Float.NEGATIVE_INFINITY) {
        out[n++] = i;
      }
    }
    if (n == 0) {
      out[n++] = argmax(logits); // every logit -inf: fall back to the first
    }
    return Arrays.copyOf(out, n);
  }

  /** Key that sorts ascending as (logit descending, id ascending). */
  private static long rankKey(float logit, int id) {
    int bits = Float.floatToIntBits(logit);
    int ordered = bits ^ ((bits >> 31) & 0x7fffffff); // signed-int order == float order
    return ((long) ~ordered << 32) | id;
  }

  private static int[] sortedByLogit(float[] logits, int[] ids) {
    long[] keys = new long[ids.length];
    for (int i = 0; i < ids.length; i++) {
      keys[i] = rankKey(logits[ids[i]], ids[i]);
    }
    Arrays.sort(keys);
    int[] out = new int[ids.length];
    for (int i = 0; i < ids.length; i++) {
      out[i] = (int) keys[i];
    }
    return out;
  }

  /** The k best of ids (logit descending, id ascending), best first, by a bounded heap. */
  static int[] topK(float[] logits, int[] ids, int k) {
    long[] heap = new long[k]; // max-heap on key: the root is the worst kept
    int size = 0;
    for (int id : ids) {
      long key = rankKey(logits[id], id);
      if (size < k) {
        heap[size] = key;
        siftUp(heap, size++);
      } else if (key < heap[0]) {
        heap[0] = key;
        siftDown(heap, size);
      }
    }
    long[] sorted = Arrays.copyOf(heap, size);
    Arrays.sort(sorted);
    int[] out = new int[size];
    for (int i = 0; i < size; i++) {
      out[i] = (int) sorted[i];
    }
    return out;
  }

  private static void siftUp(long[] h, int i) {
    while (i > 0) {
      int p = (i - 1) / 2;
      if (h[p] >= h[i]) {
        return;
      }
      long t = h[p];
      h[p] = h[i];
      h[i] = t;
      i = p;
    }
  }

  private static void siftDown(long[] h, int size) {
    int i = 0;
    while (true) {
      int l = 2 * i + 1;
      int r = l + 1;
      int m = i;
      if (l < size && h[l] > h[m]) {
        m = l;
      }
      if (r < size && h[r] > h[m]) {
        m = r;
      }
      if (m == i) {
        return;
      }
      long t = h[m];
      h[m] = h[i];
      h[i] = t;
      i = m;
    }
  }

  private static List<SampledToken.TokenLogprob> topLogprobs(float[] logits, int n, double logZ) {
    int[] all = new int[logits.length];
    Arrays.setAll(all, i -> i);
    List<SampledToken.TokenLogprob> out = new ArrayList<>(n);
    for (int id : topK(logits, all, Math.min(n, logits.length))) {
      if (logits[id] == Float.NEGATIVE_INFINITY) {
        break; // ruled out (a structured-output mask, padding): no alternative, listed last
      }
      out.add(new SampledToken.TokenLogprob(id, (float) (logits[id] - logZ)));
    }
    return out;
  }

  static double logSumExp(float[] logits) {
    float max = Float.NEGATIVE_INFINITY;
    for (float v : logits) {
      max = Math.max(max, v);
    }
    double sum = 0;
    for (float v : logits) {
      sum += Math.exp(v - max);
    }
    return max + Math.log(sum);
  }
}
