package dev.radixserve.server.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.radixserve.cache.BlockPool;
import dev.radixserve.cache.EvictionPolicy;
import dev.radixserve.cache.PrefixCache;
import dev.radixserve.cache.RadixCache;
import dev.radixserve.model.ModelConfig;
import dev.radixserve.model.ModelRunner;
import dev.radixserve.model.OnnxModelRunner;
import dev.radixserve.model.Tokenizer;
import dev.radixserve.model.constraint.ConstraintCompiler;
import dev.radixserve.model.constraint.ConstraintState;
import dev.radixserve.model.constraint.TokenConstraint;
import dev.radixserve.model.sampling.LogitsSampler;
import dev.radixserve.model.sampling.SamplingParams;
import dev.radixserve.model.tokenizer.TokenizerLoader;
import dev.radixserve.model.weights.GptWeights;
import dev.radixserve.model.weights.RandomGpt2;
import dev.radixserve.server.config.SchedulePolicy;
import dev.radixserve.server.spec.DraftSource;
import dev.radixserve.server.spec.Speculation;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A draft the structured-output constraint forbids is never accepted, through the real engine
 * and a real model run by ONNX Runtime. The draft source is a test double that proposes what the
 * model itself would say without the constraint (its unconstrained greedy continuation): the
 * model's likeliest tokens, so only the constraint's mask can reject them. The constrained
 * output with these drafts is the constrained output without speculation, token for token; no
 * verified draft had a forbidden token among the ones it kept; and the pool is whole after.
 */
class SpeculativeConstraintTest {

  private static final int PROMPT_LENGTH = 6;
  private static final int MAX_TOKENS = 24;
  private static Tokenizer tokenizer;
  private static GptWeights weights;
  private static ModelRunner runner;

  @BeforeAll
  static void model() {
    tokenizer = TokenizerLoader.standard();
    ModelConfig config = new ModelConfig(2, 2, 32, 128, tokenizer.vocabSize(), 1e-5, "gelu_new");
    weights = RandomGpt2.create(config, 3);
    runner = OnnxModelRunner.create(weights, 16, 32, 1);
  }

  @AfterAll
  static void close() throws Exception {
    runner.close();
    weights.close();
  }

  /** Records each draft it proposes (engine thread). */
  private static final class UnconstrainedContinuation implements DraftSource {
    final int[] continuation;
    final List<int[]> proposals = new ArrayList<>();
    final List<Integer> positions = new ArrayList<>();

    UnconstrainedContinuation(int[] continuation) {
      this.continuation = continuation;
    }

    @Override
    public int[] propose(int[] tokens, int length, int max) {
      int at = length - PROMPT_LENGTH; // the output position the draft's first token takes
      if (at >= continuation.length) {
        return NONE;
      }
      int[] draft = Arrays.copyOfRange(continuation, at, Math.min(continuation.length, at + max));
      proposals.add(draft);
      positions.add(at);
      return draft;
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"regex", "json-schema"})
  void aForbiddenDraftIsNeverAcceptedAndTheOutputIsThatWithoutSpeculation(String kind)
      throws Exception {
    ConstraintCompiler compiler = new ConstraintCompiler(tokenizer);
    TokenConstraint constraint = kind.equals("regex") ? compiler.regex("[0-9]+(, [0-9]+)*")
        : compiler.jsonSchema(new ObjectMapper().readTree(
            "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"integer\"},"
                + "\"tags\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}}}"));
    int[] unconstrained = run(null, Speculation.off(), Optional.empty()).tokens;
    Run plain = run(constraint, Speculation.off(), Optional.empty());
    UnconstrainedContinuation drafts = new UnconstrainedContinuation(unconstrained);
    // unpriced: the test's drafts are verified at the lengths it proposes, however fast the steps
    Run spec = run(constraint, Speculation.ngram(4).unpriced(), Optional.of(drafts));

    assertEquals(Arrays.toString(plain.tokens), Arrays.toString(spec.tokens));
    assertEquals(drafts.proposals.size(), spec.verified.size(), "a verification per draft");
    // replay the constraint along the output: where each draft was proposed, how many of its
    // tokens the constraint allowed in a row; no more than that may have been accepted
    int forbidden = 0;
    for (int i = 0; i < drafts.proposals.size(); i++) {
      int[] draft = drafts.proposals.get(i);
      int at = drafts.positions.get(i);
      ConstraintState state = constraint.start();
      // the token decoded in the draft's step (output position at - 1) is the sequence's too
      for (int j = 0; j < at; j++) {
        state.advance(spec.tokens[j], Set.of());
      }
      int allowed = 0;
      while (allowed < draft.length && allows(state, draft[allowed])) {
        state.advance(draft[allowed++], Set.of());
      }
      if (allowed < draft.length) {
        forbidden++;
      }
      int[] verdict = spec.verified.get(i);
      assertEquals(draft.length, verdict[0]);
      assertTrue(verdict[1] <= allowed, "draft " + Arrays.toString(draft) + " at " + at
          + ": " + verdict[1] + " accepted, the constraint allows " + allowed);
    }
    assertTrue(forbidden >= 2, forbidden + " drafts held a forbidden token");
  }

  private static boolean allows(ConstraintState state, int token) {
    float[] logits = new float[tokenizer.vocabSize()];
    state.mask(logits, Set.of());
    return logits[token] != Float.NEGATIVE_INFINITY;
  }

  private record Run(int[] tokens, List<int[]> verified) {}

  /** One greedy request on a fresh engine over the shared runner; checks the pool after. */
  private static Run run(TokenConstraint constraint, Speculation speculation,
      Optional<DraftSource> drafts) throws Exception {
    BlockPool pool = new BlockPool(runner.numBlocks());
    List<int[]> verified = new ArrayList<>();
    EngineObserver observer = new EngineObserver() {
      @Override
      public void speculated(int drafted, int accepted) {
        verified.add(new int[] {drafted, accepted});
      }
    };
    Engine engine = new Engine(runner, pool,
        Optional.<PrefixCache>of(new RadixCache(pool, 16, EvictionPolicy.lru())), Optional.empty(),
        tokenizer, Set.of(tokenizer.eosTokenId()),
        p -> new LogitsSampler(p, tokenizer.vocabSize()),
        new Engine.Settings(SchedulePolicy.FCFS, 8, 256, 256, 16, null, speculation), observer,
        drafts);
    List<Integer> tokens = new ArrayList<>();
    CompletableFuture<Void> done = new CompletableFuture<>();
    int[] prompt = tokenizer.encode("Numbers: 1, 2,");
    assertEquals(PROMPT_LENGTH, prompt.length, Arrays.toString(prompt));
    engine.submit(new EngineRequest("r", "r", prompt, SamplingParams.greedy(), 1, MAX_TOKENS,
        true, "", new TokenSink() {
          @Override
          public void onOutput(ChoiceOutput output) {
            output.tokens().forEach(t -> tokens.add(t.tokenId()));
          }

          @Override
          public void onComplete(RequestUsage usage) {
            done.complete(null);
          }

          @Override
          public void onError(int httpStatus, String message) {
            done.completeExceptionally(new AssertionError(httpStatus + " " + message));
          }
        }, false, "r", 0, constraint));
    engine.start();
    done.get(120, TimeUnit.SECONDS);
    EngineSnapshot snap = engine.inspect().get(10, TimeUnit.SECONDS);
    engine.shutdown(Duration.ofSeconds(5));
    assertNull(snap.integrityError());
    assertTrue(snap.quiescent(), snap.toString());
    return new Run(tokens.stream().mapToInt(Integer::intValue).toArray(), verified);
  }
}
