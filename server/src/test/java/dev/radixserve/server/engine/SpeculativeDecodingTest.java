package dev.radixserve.server.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.model.ForwardBatch;
import dev.radixserve.model.sampling.SamplingParams;
import dev.radixserve.server.spec.Speculation;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.IntBinaryOperator;
import java.util.stream.IntStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Speculative decoding in the scheduler and output processor, over a fake model whose output
 * mostly repeats (so drafts from the sequence's own tokens and from the cache are often right)
 * and now and then, at positions the drafts cannot foresee, does not: the tokens are those of
 * decoding without speculation, token for token, with the cache on and off and with a pool so
 * small that sequences are preempted; every step keeps the block invariants, and after each step
 * no sequence holds a block past the one its next token goes into (rejected drafts rolled back).
 */
class SpeculativeDecodingTest {

  private static final int VOCAB = EngineHarness.TOKENIZER.vocabSize();

  /**
   * The fake model: after token t at position p comes the next token of a 7-token cycle, except
   * at every 11th position, where a token depending on p comes (a surprise no draft predicts).
   * Each row is computed from the token the batch holds at its position (drafts included).
   */
  private static final EngineHarness.Forward CYCLING = peaked(10,
      (p, t) -> (p + 1) % 11 == 0 ? 300 + p % 13 : 100 + (t - 100 + 1 + 7) % 7);

  /**
   * A fake model whose every logits row has one token at {@code logit} (the rest 0): {@code
   * next.applyAsInt(p, t)} for the row of token t at position p, so it is computed from the token
   * the batch holds there (drafts included).
   */
  private static EngineHarness.Forward peaked(float logit, IntBinaryOperator next) {
    return (step, batch) -> {
      float[][] out = new float[batch.logitRows()][VOCAB];
      for (int k = 0; k < batch.seqs().size(); k++) {
        ForwardBatch.Seq s = batch.seqs().get(k);
        int first = s.newTokens().length - s.logitRows();
        for (int i = first; i < s.newTokens().length; i++) {
          out[batch.firstRow(k) + i - first][next.applyAsInt(s.pastLen() + i, s.newTokens()[i])]
              = logit;
        }
      }
      return out;
    };
  }

  @ParameterizedTest
  @CsvSource({"true, 64", "false, 64", "true, 14", "false, 14"})
  void sameTokensAsWithoutSpeculationAndNothingHeldPastTheNextToken(boolean caching, int blocks) {
    Map<String, List<Integer>> plain = run(new EngineHarness(blocks, 4, caching,
        dev.radixserve.server.config.SchedulePolicy.FCFS, 64, VOCAB, CYCLING));
    EngineHarness spec = EngineHarness.speculative(blocks, 4, caching, 64, VOCAB, CYCLING,
        Speculation.ngram(5));
    assertEquals(plain, run(spec));
    assertTrue(spec.accepted > 0 && spec.drafted > spec.accepted,
        "drafted " + spec.drafted + ", accepted " + spec.accepted);
    if (blocks == 14) {
      assertTrue(spec.preemptions > 0, "no preemption");
    }
  }

  /**
   * A fake model no three-token key predicts: at every third position 100, after it 101 (102 at
   * every fourth time), anywhere else a token of that position's own. Only a shorter key does
   * (what followed the latest 100: right one time in two), so with priced drafting, where a
   * step of one more row is no dearer (no step times here), the one-token guesses of {@code
   * ShortKeyLookup} are verified, some held and some not, and the tokens stay those of decoding
   * without speculation; unpriced (lengths by acceptance alone) no guess is made, sampled nothing
   * is drafted.
   */
  @ParameterizedTest
  @CsvSource({"true", "false"})
  void oneTokenGuessesByAShortKeyKeepTheTokensWhereNoLongerKeyMatches(boolean caching) {
    // so peaked (100) that sampling at temperature 1 draws it too
    EngineHarness.Forward pairs = peaked(100, (p, t) -> t == 100 ? ((p + 1) % 12 == 1 ? 102 : 101)
        : (p + 1) % 3 == 0 ? 100 : 200 + p + 1);
    int[] prompt = {300, 301, 302, 303};
    EngineHarness plain = new EngineHarness(64, 4, caching,
        dev.radixserve.server.config.SchedulePolicy.FCFS, 64, VOCAB, pairs);
    plain.submit("r", prompt, 1, 60, SamplingParams.greedy());
    EngineHarness spec = EngineHarness.speculative(64, 4, caching, 64, VOCAB, pairs,
        Speculation.ngram(5));
    spec.submit("r", prompt, 1, 60, SamplingParams.greedy());
    EngineHarness unpriced = EngineHarness.speculative(64, 4, caching, 64, VOCAB, pairs,
        Speculation.ngram(5).unpriced());
    unpriced.submit("r", prompt, 1, 60, SamplingParams.greedy());
    runToEnd(plain, spec, unpriced);
    assertEquals(List.of(60), plain.tokens.values().stream().map(List::size).toList());
    assertEquals(plain.tokens, spec.tokens);
    assertEquals(plain.tokens, unpriced.tokens);
    assertTrue(spec.accepted >= 3 && spec.drafted > spec.accepted,
        "drafted " + spec.drafted + ", accepted " + spec.accepted);
    // unpriced, no one-token guess is made: only a pair held once before drafts (ShortKeyLookup),
    // the first times (100, 101) comes, and what followed it then never comes again
    assertEquals(0, unpriced.accepted);
    assertTrue(unpriced.drafted <= 3, "drafted " + unpriced.drafted);
    // sampled requests are not guessed for (measured no gain there): nothing drafted
    SamplingParams sampled = new SamplingParams(1.0, 0, 1, 0, 42L, 1, 0, 0, Set.of(), false, 0);
    EngineHarness sampledSpec = EngineHarness.speculative(64, 4, caching, 64, VOCAB, pairs,
        Speculation.ngram(5));
    sampledSpec.submit("r", prompt, 1, 60, sampled);
    for (int i = 0; i < 1_000 && sampledSpec.scheduler.hasWork(); i++) {
      sampledSpec.step();
    }
    assertEquals(plain.tokens, sampledSpec.tokens);
    assertEquals(0, sampledSpec.drafted);
  }

  /**
   * A fake model that quotes its prompt (64 distinct tokens) in runs of three, each run from a
   * place of its own and after a token of its own (a quote mark no key predicts): no three-token
   * key ever predicts a quoted token (the one that finds the run finds it at its last token, and
   * then proposes the prompt's next token where the model writes its mark), but the run's first
   * two tokens, a pair the sequence held once, do. Greedy, the tokens stay those without
   * speculation, priced and by acceptance alone, and the pair's drafts are held; sampled, nothing
   * is drafted by a pair.
   */
  @ParameterizedTest
  @CsvSource({"true", "false"})
  void aPairHeldOnceBeforeDraftsTheRestOfAQuote(boolean caching) {
    int promptLength = 64;
    EngineHarness.Forward quoting = peaked(100, (p, t) -> {
      int output = p + 1 - promptLength; // the output position predicted
      int quote = Math.floorDiv(output, 4);
      int start = Math.floorMod(quote * 13, 60); // distinct for the 15 quotes of 60 tokens
      int at = Math.floorMod(output, 4);
      return at == 0 ? 400 + output : 300 + start + at - 1;
    });
    int[] prompt = IntStream.range(300, 300 + promptLength).toArray();
    EngineHarness plain = new EngineHarness(64, 4, caching,
        dev.radixserve.server.config.SchedulePolicy.FCFS, 64, VOCAB, quoting);
    EngineHarness priced = EngineHarness.speculative(64, 4, caching, 64, VOCAB, quoting,
        Speculation.ngram(5));
    EngineHarness unpriced = EngineHarness.speculative(64, 4, caching, 64, VOCAB, quoting,
        Speculation.ngram(5).unpriced());
    SamplingParams sampled = new SamplingParams(1.0, 0, 1, 0, 42L, 1, 0, 0, Set.of(), false, 0);
    EngineHarness sampledSpec = EngineHarness.speculative(64, 4, caching, 64, VOCAB, quoting,
        Speculation.ngram(5).unpriced());
    for (EngineHarness h : List.of(plain, priced, unpriced)) {
      h.submit("r", prompt, 1, 60, SamplingParams.greedy());
    }
    sampledSpec.submit("r", prompt, 1, 60, sampled);
    runToEnd(plain, priced, unpriced, sampledSpec);
    assertEquals(List.of(60), plain.tokens.values().stream().map(List::size).toList());
    assertEquals(plain.tokens, priced.tokens);
    assertEquals(plain.tokens, unpriced.tokens);
    assertEquals(plain.tokens, sampledSpec.tokens);
    // each of the 15 quotes' third token is the one a pair can draft (the first is a mark's
    // successor, the second follows a pair with the mark in it)
    for (EngineHarness h : List.of(priced, unpriced)) {
      assertTrue(h.accepted >= 10, "accepted " + h.accepted + " of " + h.drafted);
    }
    // sampled: the three-token key's drafts alone, none of which holds
    assertEquals(0, sampledSpec.accepted);
  }

  /**
   * The fake model, sampled: the cycle's next token is the likeliest (logit 3) but two others
   * (logit 1.5, every other token ruled out) are drawn now and then; drafts of the cycle are then accepted or rejected by
   * the draw. With the same seed, the tokens are those of decoding without speculation: the
   * sampler draws one number per emitted token, in the same order either way, so the output
   * distribution is the model's exactly (standard rejection sampling with a one-point draft).
   */
  @ParameterizedTest
  @CsvSource({"true", "false"})
  void seededSampledTokensAreThoseWithoutSpeculation(boolean caching) {
    EngineHarness.Forward sampled = (step, batch) -> {
      float[][] rows = CYCLING.run(step, batch);
      for (float[] row : rows) {
        int next = 0;
        while (row[next] == 0) {
          next++;
        }
        java.util.Arrays.fill(row, Float.NEGATIVE_INFINITY);
        row[next] = 3;
        row[400 + next % 5] = 1.5f;
        row[410 + next % 3] = 1.5f;
      }
      return rows;
    };
    SamplingParams params = new SamplingParams(1.0, 0, 1, 0, 42L, 1, 0, 0, Set.of(), false, 0);
    Map<String, List<Integer>> plain = run(new EngineHarness(64, 4, caching,
        dev.radixserve.server.config.SchedulePolicy.FCFS, 64, VOCAB, sampled), params);
    EngineHarness spec = EngineHarness.speculative(64, 4, caching, 64, VOCAB, sampled,
        Speculation.ngram(5));
    assertEquals(plain, run(spec, params));
    assertTrue(spec.accepted > 0 && spec.drafted > spec.accepted,
        "drafted " + spec.drafted + ", accepted " + spec.accepted);
  }

  /**
   * The sampled verification end to end (scheduler, speculator, output processor, sampler), by
   * frequency over many seeds: a one-token draft d is proposed at each request's first decode
   * step over a fixed row (temperature 0.7, top-p 0.9); d must be accepted in a share p(d) of
   * the requests, and a rejected draft's token must follow p without d, renormalised (standard
   * speculative sampling with q = δ_d; OnePointDraftTest checks the formulas exactly). Bounds:
   * 4.5 binomial standard deviations (the test is deterministic given its seeds); a verifier
   * that accepted with probability p(d)² or drew a rejected draft's token uniformly would fail.
   * A draft outside the top-p nucleus (p(d) = 0) is never accepted.
   */
  @ParameterizedTest
  @CsvSource({"100, true", "101, true", "103, false"})
  void sampledVerificationAcceptsWithTheTargetsProbabilityAndResamplesTheRest(int draft,
      boolean inNucleus) {
    float[] row = new float[VOCAB];
    java.util.Arrays.fill(row, Float.NEGATIVE_INFINITY);
    float[] logits = {2.0f, 1.5f, 1.0f, 0.5f, 0.0f, -1.0f, 3.0f, -0.25f, 1.25f};
    for (int i = 0; i < logits.length; i++) {
      row[100 + i] = logits[i];
    }
    EngineHarness.Forward fixed = (step, batch) -> {
      float[][] out = new float[batch.logitRows()][];
      for (int i = 0; i < out.length; i++) {
        out[i] = row.clone();
      }
      return out;
    };
    int n = 2000;
    EngineHarness h = EngineHarness.speculative(64, 4, false, 64, VOCAB, fixed,
        Speculation.ngram(4));
    h.firstDrafts = (tokens, length, max) -> new int[] {draft};
    Map<Integer, Integer> rejected = new TreeMap<>();
    int accepted = 0;
    for (int seed = 0; seed < n; seed++) {
      String id = "s" + seed;
      h.submit(id, new int[] {100, 101, 102, 103}, 1, 3,
          new SamplingParams(0.7, 0, 0.9, 0, (long) seed, 1, 0, 0, Set.of(), false, 0));
      while (h.scheduler.hasWork()) {
        h.step();
      }
      int second = h.tokens.get(id + "#0").get(1); // the token the draft was verified against
      if (second == draft) {
        accepted++;
      } else {
        rejected.merge(second, 1, Integer::sum);
      }
    }
    assertEquals(n, h.drafted, "one draft token verified per request");
    assertEquals(accepted, h.accepted);
    h.assertAccounting();
    var p = new dev.radixserve.model.sampling.LogitsSampler(new SamplingParams(0.7, 0, 0.9, 0, 1L,
        1, 0, 0, Set.of(), false, 0), VOCAB).distribution(row.clone());
    double pd = p.probability(draft);
    assertEquals(inNucleus, pd > 0, "p(d) = " + pd);
    assertWithin(accepted, n, pd, "accepted");
    int r = n - accepted;
    for (int y = 100; y < 100 + logits.length; y++) {
      if (y != draft) {
        assertWithin(rejected.getOrDefault(y, 0), r, p.probability(y) / (1 - pd), "token " + y);
      }
    }
    for (int y : rejected.keySet()) {
      assertTrue(p.probability(y) > 0, "token " + y + " drawn outside the nucleus");
    }
  }

  /** {@code count} of {@code n} trials with probability {@code q}, within 4.5 SD. */
  private static void assertWithin(int count, int n, double q, String what) {
    double sd = Math.sqrt(n * q * (1 - q));
    assertTrue(Math.abs(count - n * q) <= 4.5 * sd + 1e-9,
        what + ": " + count + " of " + n + ", expected " + n * q + " ± " + 4.5 * sd);
  }

  private static Map<String, List<Integer>> run(EngineHarness h) {
    return run(h, SamplingParams.greedy());
  }

  private static Map<String, List<Integer>> run(EngineHarness h, SamplingParams params) {
    for (int r = 0; r < 3; r++) {
      int shift = r;
      int[] prompt = IntStream.range(0, 6 + r).map(i -> 100 + (i + shift) % 7).toArray();
      h.submit("r" + r, prompt, r == 2 ? 2 : 1, 30, params);
    }
    for (int i = 0; i < 10_000 && h.scheduler.hasWork(); i++) {
      h.step();
      h.assertAccounting();
      for (Sequence s : h.scheduler.running()) {
        int keep = Math.max(SequenceBlocks.blocksFor(s.length(), 4), s.heldBlocks);
        assertTrue(s.tableSize() <= keep, s + " holds blocks past its next token");
      }
    }
    assertEquals(List.of(), h.liveRequests());
    return new TreeMap<>(h.tokens);
  }

  /** Steps each harness until its requests end (at most 1,000 steps), checking the accounting. */
  private static void runToEnd(EngineHarness... harnesses) {
    for (EngineHarness h : harnesses) {
      for (int i = 0; i < 1_000 && h.scheduler.hasWork(); i++) {
        h.step();
        h.assertAccounting();
      }
      assertEquals(List.of(), h.liveRequests());
    }
  }
}
