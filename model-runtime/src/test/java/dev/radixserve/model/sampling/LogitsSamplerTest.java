package dev.radixserve.model.sampling;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class LogitsSamplerTest {

  private static SamplingParams params(double temperature, int topK, double topP, double minP, Long seed) {
    return new SamplingParams(temperature, topK, topP, minP, seed, 1, 0, 0, Set.of(), false, 0);
  }

  /** Tokens drawn at least once in many draws (with a fixed seed the set is deterministic). */
  private static Set<Integer> survivors(SamplingParams p, float[] logits) {
    LogitsSampler s = new LogitsSampler(p, logits.length);
    Set<Integer> seen = new TreeSet<>();
    for (int i = 0; i < 4000; i++) {
      seen.add(s.sample(logits.clone()).tokenId());
    }
    return seen;
  }

  @Test
  void greedyTakesArgmaxLowestIdOnTies() {
    LogitsSampler s = new LogitsSampler(SamplingParams.greedy(), 5);
    assertEquals(1, s.sample(new float[] {0f, 3f, 3f, -1f, 2f}).tokenId());
    assertEquals(4, s.sample(new float[] {0f, 3f, 3f, -1f, 5f}).tokenId());
  }

  @Test
  void topKKeepsKBestWithTiesToLowerIds() {
    float[] logits = {1f, 2f, 2f, 0f, 2f};
    assertEquals(Set.of(1, 2), survivors(params(1, 2, 1, 0, 1L), logits));
    assertEquals(Set.of(0, 1, 2, 3, 4), survivors(params(1, 0, 1, 0, 1L), logits));
  }

  @Test
  void topPKeepsSmallestSetReachingMass() {
    // probabilities 0.5, 0.25, 0.125, 0.125 (logits ln of those)
    float[] logits = {(float) Math.log(0.5), (float) Math.log(0.25), (float) Math.log(0.125), (float) Math.log(0.125)};
    assertEquals(Set.of(0), survivors(params(1, 0, 0.5, 0, 3L), logits));
    assertEquals(Set.of(0, 1), survivors(params(1, 0, 0.6, 0, 3L), logits));
    assertEquals(Set.of(0, 1), survivors(params(1, 0, 0.75, 0, 3L), logits));
    assertEquals(Set.of(0, 1, 2), survivors(params(1, 0, 0.8, 0, 3L), logits));
    assertEquals(Set.of(0), survivors(params(1, 0, 0.01, 0, 3L), logits)); // at least one
  }

  @Test
  void minPDropsTokensBelowFractionOfMax() {
    float[] logits = {(float) Math.log(0.5), (float) Math.log(0.3), (float) Math.log(0.15), (float) Math.log(0.05)};
    // threshold 0.5 * 0.5 = 0.25: keeps 0.5 and 0.3
    assertEquals(Set.of(0, 1), survivors(params(1, 0, 1, 0.5, 5L), logits));
    // threshold 0.2 * 0.5 = 0.1: keeps 0.5, 0.3, 0.15
    assertEquals(Set.of(0, 1, 2), survivors(params(1, 0, 1, 0.2, 5L), logits));
  }

  @Test
  void temperatureSharpensDistribution() {
    float[] logits = {1f, 0f};
    int[] counts = counts(params(0.25, 0, 1, 0, 9L), logits, 20000);
    double p0 = 1 / (1 + Math.exp(-4)); // softmax of logits / 0.25
    assertEquals(p0, counts[0] / 20000.0, 0.01);
  }

  @Test
  void frequenciesMatchSoftmax() {
    float[] logits = {2f, 1f, 0f, -1f};
    int n = 40000;
    int[] counts = counts(params(1, 0, 1, 0, 12345L), logits, n);
    double z = Math.exp(2) + Math.exp(1) + 1 + Math.exp(-1);
    for (int i = 0; i < 4; i++) {
      assertEquals(Math.exp(logits[i]) / z, counts[i] / (double) n, 0.01, "token " + i);
    }
  }

  private static int[] counts(SamplingParams p, float[] logits, int n) {
    LogitsSampler s = new LogitsSampler(p, logits.length);
    int[] counts = new int[logits.length];
    for (int i = 0; i < n; i++) {
      counts[s.sample(logits.clone()).tokenId()]++;
    }
    return counts;
  }

  @Test
  void sameSeedSameTokens() {
    float[] logits = new float[1000];
    for (int i = 0; i < logits.length; i++) {
      logits[i] = (float) Math.sin(i) * 3;
    }
    SamplingParams p = params(0.9, 50, 0.9, 0.01, 77L);
    LogitsSampler a = new LogitsSampler(p, logits.length);
    LogitsSampler b = new LogitsSampler(p, logits.length);
    LogitsSampler c = new LogitsSampler(params(0.9, 50, 0.9, 0.01, 78L), logits.length);
    boolean differs = false;
    for (int i = 0; i < 200; i++) {
      int ta = a.sample(logits.clone()).tokenId();
      assertEquals(ta, b.sample(logits.clone()).tokenId());
      differs |= ta != c.sample(logits.clone()).tokenId();
    }
    assertTrue(differs, "another seed gives another sequence");
  }

  @Test
  void repetitionPenaltyDividesPositiveMultipliesNegative() {
    SamplingParams p = new SamplingParams(0, 0, 1, 0, null, 2, 0, 0, Set.of(), false, 0);
    LogitsSampler s = new LogitsSampler(p, 4);
    s.accept(0, true);
    s.accept(1, false);
    float[] logits = {4f, -1f, 2.5f, -1.5f};
    // seen 0 -> 4/2 = 2, seen 1 -> -1*2 = -2; unseen stay: argmax is token 2 (2.5)
    assertEquals(2, s.sample(logits).tokenId());
    assertEquals(2f, logits[0]);
    assertEquals(-2f, logits[1]);
    assertEquals(2.5f, logits[2]);
    assertEquals(-1.5f, logits[3]);
  }

  @Test
  void presenceAndFrequencyPenaltiesCountOutputOnly() {
    SamplingParams p = new SamplingParams(0, 0, 1, 0, null, 1, 0.5, 0.25, Set.of(), false, 0);
    LogitsSampler s = new LogitsSampler(p, 3);
    s.accept(2, true); // prompt: not penalised by presence/frequency
    s.accept(0, false);
    s.accept(0, false);
    s.accept(1, false);
    float[] logits = {3f, 3f, 3f};
    assertEquals(2, s.sample(logits).tokenId());
    assertEquals(3f - 0.5f - 0.5f, logits[0]); // presence 0.5 + 2 * 0.25
    assertEquals(3f - 0.5f - 0.25f, logits[1]);
    assertEquals(3f, logits[2]);
  }

  @Test
  void logprobsComeFromRawDistribution() {
    SamplingParams p = new SamplingParams(0, 0, 1, 0, null, 3, 1, 0, Set.of(), true, 2);
    LogitsSampler s = new LogitsSampler(p, 4);
    s.accept(0, false); // penalties change the choice but not the reported logprobs
    float[] logits = {2f, 1f, 1f, -1f};
    SampledToken t = s.sample(logits);
    double z = Math.log(Math.exp(2) + 2 * Math.exp(1) + Math.exp(-1));
    assertEquals(1, t.tokenId()); // token 0: 2/3 - 1 < 1; tie 1 vs 2 goes to 1
    assertEquals((float) (1 - z), t.logprob(), 1e-6);
    assertEquals(List.of(0, 1), t.top().stream().map(SampledToken.TokenLogprob::tokenId).toList());
    assertEquals((float) (2 - z), t.top().get(0).logprob(), 1e-6);
    assertEquals((float) (1 - z), t.top().get(1).logprob(), 1e-6);
  }

  @Test
  void noLogprobsWhenNotRequested() {
    SampledToken t = new LogitsSampler(SamplingParams.greedy(), 2).sample(new float[] {0f, 1f});
    assertTrue(Float.isNaN(t.logprob()));
    assertTrue(t.top().isEmpty());
  }

  @Test
  void stopTokens() {
    SamplingParams p = new SamplingParams(0, 0, 1, 0, null, 1, 0, 0, Set.of(50256, 13), false, 0);
    LogitsSampler s = new LogitsSampler(p, 50257);
    assertTrue(s.isStop(50256));
    assertTrue(s.isStop(13));
    assertFalse(s.isStop(0));
  }

  @Test
  void badInputIsRejected() {
    LogitsSampler s = new LogitsSampler(SamplingParams.greedy(), 3);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> s.sample(new float[2]));
    assertEquals("logits have 2 entries, vocabulary 3", e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> s.accept(3, true));
  }

  @Test
  void topKSelectionMatchesFullSortOnLargeVocab() {
    float[] logits = new float[50257];
    java.util.SplittableRandom r = new java.util.SplittableRandom(1);
    for (int i = 0; i < logits.length; i++) {
      logits[i] = (float) Math.floor(r.nextDouble() * 200) / 10; // many ties
    }
    int[] all = new int[logits.length];
    java.util.Arrays.setAll(all, i -> i);
    int[] top = LogitsSampler.topK(logits, all, 20);
    Integer[] boxed = new Integer[logits.length];
    java.util.Arrays.setAll(boxed, i -> i);
    java.util.Arrays.sort(boxed, (a, b) -> logits[a] != logits[b] ? Float.compare(logits[b], logits[a]) : a - b);
    for (int i = 0; i < 20; i++) {
      assertEquals(boxed[i], top[i]);
    }
  }

  @Test
  void scoreGivesTheLogSoftmaxOfAGivenTokenAndTheBestAlternatives() {
    float[] logits = {2f, 0f, 1f, 2f};
    double logZ = Math.log(2 * Math.exp(2) + Math.exp(0) + Math.exp(1));
    SampledToken s = LogitsSampler.score(logits, 1, 2);
    assertEquals(1, s.tokenId());
    assertEquals(0 - logZ, s.logprob(), 1e-6);
    assertEquals(List.of(new SampledToken.TokenLogprob(0, (float) (2 - logZ)),
        new SampledToken.TokenLogprob(3, (float) (2 - logZ))), s.top());
    assertEquals(List.of(), LogitsSampler.score(logits, 2, 0).top());
  }

  private static LogitsSampler withRules(LogitRules rules, int vocab) {
    return new LogitsSampler(SamplingParams.greedy().withRules(rules), vocab);
  }

  @Test
  void logitBiasIsAddedBeforeTheChoiceAndLogprobsStayRaw() {
    float[] logits = {0f, 3f, 2f, 1f};
    LogitsSampler down = withRules(new LogitRules(Map.of(1, -100f), 0, Set.of(), null,
        List.of()), 4);
    assertEquals(2, down.sample(logits.clone()).tokenId());
    LogitsSampler up = withRules(new LogitRules(Map.of(0, 100f), 0, Set.of(), null,
        List.of()), 4);
    assertEquals(0, up.sample(logits.clone()).tokenId());
    // a bias of 2.5 on token 3 makes it 3.5 > 3: it wins, no more
    assertEquals(3, withRules(new LogitRules(Map.of(3, 2.5f), 0, Set.of(), null, List.of()), 4)
        .sample(logits.clone()).tokenId());
    assertEquals(1, withRules(new LogitRules(Map.of(3, 1.5f), 0, Set.of(), null, List.of()), 4)
        .sample(logits.clone()).tokenId());
    SamplingParams withLogprobs = new SamplingParams(0, 0, 1, 0, null, 1, 0, 0, Set.of(), true,
        0, new LogitRules(Map.of(0, 100f), 0, Set.of(), null, List.of()));
    SampledToken t = new LogitsSampler(withLogprobs, 4).sample(logits.clone());
    assertEquals(0, t.tokenId());
    assertEquals(0f - LogitsSampler.logSumExp(logits), t.logprob(), 1e-6);
    assertThrows(IllegalArgumentException.class,
        () -> new LogitRules(Map.of(0, 100.5f), 0, Set.of(), null, List.of()));
  }

  @Test
  void minTokensHoldsBackTheEndsUntilThenOnly() {
    float[] logits = {0f, 1f, 5f}; // token 2 (the end) is the greedy choice
    LogitsSampler s = withRules(new LogitRules(Map.of(), 2, Set.of(2), null, List.of()), 3);
    assertEquals(1, s.sample(logits.clone()).tokenId());
    s.accept(1, false);
    assertEquals(1, s.sample(logits.clone()).tokenId());
    s.accept(1, false);
    assertEquals(2, s.sample(logits.clone()).tokenId());
    // prompt tokens do not count
    LogitsSampler p = withRules(new LogitRules(Map.of(), 1, Set.of(2), null, List.of()), 3);
    p.accept(0, true);
    assertEquals(1, p.sample(logits.clone()).tokenId());
  }

  @Test
  void allowedTokenIdsRuleOutEveryOtherToken() {
    LogitsSampler s = withRules(new LogitRules(Map.of(), 0, Set.of(), Set.of(0, 3), List.of()),
        4);
    assertEquals(3, s.sample(new float[] {0f, 9f, 8f, 1f}).tokenId());
    SamplingParams hot = new SamplingParams(2, 0, 1, 0, 5L, 1, 0, 0, Set.of(), false, 0,
        new LogitRules(Map.of(), 0, Set.of(), Set.of(0, 3), List.of()));
    assertEquals(Set.of(0, 3), survivors(hot, new float[] {0f, 1f, 1f, 0.5f}));
  }

  @Test
  void badWordsRuleOutTheirLastTokenAfterTheirPrefix() {
    float[] logits = {0f, 1f, 2f, 3f};
    // word [3]: never; word [1, 2]: not right after 1
    LogitsSampler s = withRules(new LogitRules(Map.of(), 0, Set.of(), null,
        List.of(new int[] {3}, new int[] {1, 2})), 4);
    assertEquals(2, s.sample(logits.clone()).tokenId());
    s.accept(1, false);
    assertEquals(1, s.sample(logits.clone()).tokenId());
    s.accept(0, false);
    assertEquals(2, s.sample(logits.clone()).tokenId());
  }
}
