package dev.radixserve.server.engine;

import dev.radixserve.model.Tokenizer;
import dev.radixserve.model.sampling.LogitsSampler;
import dev.radixserve.model.sampling.SampledToken;
import dev.radixserve.model.sampling.SamplingParams;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.logging.Logger;

/**
 * After a forward: advances computed lengths, caches finished prefill chunks, scores prompt tokens
 * (prompt logprobs), forks the choices of a request whose prompt is done, samples, applies the
 * token stop conditions (EOS, stop token ids, max_tokens), reports token ids to sinks and
 * observer, and retires finished sequences (blocks cached and released). Text and stop strings
 * are the sink's side: it ends a choice through {@link #finishChoice}.
 */
final class OutputProcessor {

  private static final Logger LOG = Logger.getLogger(OutputProcessor.class.getName());

  private final Scheduler scheduler;
  private final SequenceBlocks blocks;
  private final SamplerFactory samplers;
  private final Tokenizer tokenizer;
  private final Set<Integer> eosTokenIds;
  private final EngineObserver observer;
  private final Map<String, RequestState> requests;
  private final Speculator speculator;

  /**
   * @param eosTokenIds tokens that end a choice unless its request ignores EOS
   * @param speculator told how each verified draft fared
   */
  OutputProcessor(Scheduler scheduler, SequenceBlocks blocks, SamplerFactory samplers,
      Tokenizer tokenizer, Set<Integer> eosTokenIds, EngineObserver observer,
      Map<String, RequestState> requests, Speculator speculator) {
    this.speculator = speculator;
    this.scheduler = scheduler;
    this.blocks = blocks;
    this.samplers = samplers;
    this.tokenizer = tokenizer;
    this.eosTokenIds = Set.copyOf(eosTokenIds);
    this.observer = observer;
    this.requests = requests;
  }

  /** Creates choice 0 of a new request (the one that prefills; the others fork from it). */
  Sequence newRequest(EngineRequest request, long arrivalNanos) {
    RequestState state = new RequestState(request, arrivalNanos);
    requests.put(request.id(), state);
    Sequence first = newSequence(state, 0);
    state.live.add(first);
    return first;
  }

  private Sequence newSequence(RequestState state, int choice) {
    EngineRequest r = state.request;
    SamplingParams params = seededFor(r.params(), choice);
    if (params.rules().minTokens() > 0) {
      params = params.withRules(params.rules().withHeldEnds(endTokens(r)));
    }
    var sampler = samplers.create(params);
    for (int t : r.promptTokens()) {
      sampler.accept(t, true);
    }
    Sequence s = new Sequence(r, state, choice, sampler);
    if (s.guide != null) {
      s.guideEnds = endTokens(r);
    }
    return s;
  }

  static SamplingParams seededFor(SamplingParams p, int choice) {
    if (choice == 0 || p.seed() == null) {
      return p;
    }
    return new SamplingParams(p.temperature(), p.topK(), p.topP(), p.minP(), p.seed() + choice,
        p.repetitionPenalty(), p.presencePenalty(), p.frequencyPenalty(), p.stopTokenIds(),
        p.logprobs(), p.topLogprobs(), p.rules());
  }

  /** @param logits the runner's rows for {@code step.toBatch()}: one per chunk, or per token */
  void process(ScheduledStep step, float[][] logits) {
    int row = 0;
    for (ScheduledStep.Chunk c : step.chunks()) {
      Sequence s = c.seq();
      blocks.copied(s);
      int firstRow = row;
      row += c.rows();
      if (c.draft().length > 0) {
        verify(s, c.draft(), logits, firstRow);
        continue;
      }
      int start = s.numComputed;
      s.numComputed += c.tokens();
      int prefill = Math.min(s.prefillEnd, s.numComputed) - start;
      if (prefill > 0) {
        observer.promptTokensComputed(prefill);
        blocks.cacheComputed(s);
      }
      if (c.allLogits()) {
        scorePrompt(s, start, logits, firstRow, c.tokens());
      }
      if (s.numComputed < s.length()) {
        continue; // mid-prompt chunk: nothing to sample yet
      }
      float[] last = sampleable(logits[row - 1]);
      if (s.needsPromptLogits()) {
        deliverPromptLogprobs(s.state);
      }
      if (s.request.maxTokens() == 0) {
        finishPromptOnly(s);
        continue;
      }
      if (s.choice == 0 && s.request.n() > 1 && !s.forked) {
        fork(s, last);
      }
      emit(s, last);
    }
  }

  /**
   * Speculative decoding's verification: emits tokens from the rows of the decoded token and the
   * draft after it, in order, exactly as decoding one token per step would (same sampler, same
   * constraint, same stop conditions), and goes on to row i + 1 only while the token emitted
   * from row i is draft token i, whose K/V the step computed: the longest agreeing prefix of the
   * draft plus the model's own next token. Greedy, that is exact agreement; sampled, it is
   * standard rejection sampling with a one-point draft distribution (accept draft d with
   * probability p(d), else draw from p without d, renormalized), which is what drawing from p
   * and comparing with d does; and the sampler draws its random numbers in the same order as
   * without speculation, so a seeded request gives the same tokens with it on or off. The
   * positions of the rejected draft tokens are rolled back.
   */
  private void verify(Sequence s, int[] draft, float[][] logits, int firstRow) {
    s.numComputed++; // the decoded token
    int accepted = 0;
    boolean running = true;
    for (int i = 0; running; i++) {
      running = emit(s, sampleable(logits[firstRow + i]));
      if (!running || i == draft.length || s.token(s.length() - 1) != draft[i]) {
        break;
      }
      s.numComputed++; // draft token i is the sequence's token now, its K/V computed
      accepted++;
    }
    speculator.verified(s, draft.length, accepted);
    if (running) {
      blocks.rollBack(s);
    }
  }

  /** Scores prompt token p + 1 with the row of position p, for each position of the chunk. */
  private void scorePrompt(Sequence s, int start, float[][] logits, int firstRow, int tokens) {
    SampledToken[] scored = s.state.promptLogprobs;
    for (int i = 0; i < tokens && start + i + 1 < s.promptLen; i++) {
      int next = start + i + 1;
      scored[next] = LogitsSampler.score(sampleable(logits[firstRow + i]), s.token(next),
          s.request.params().topLogprobs());
    }
  }

  /** max_tokens 0: every choice ends with its prompt, nothing sampled. */
  private void finishPromptOnly(Sequence s) {
    for (int choice = 0; choice < s.request.n(); choice++) {
      s.request.sink().onOutput(new ChoiceOutput(choice, List.of(), FinishReason.LENGTH));
    }
    s.state.unfinishedChoices = 1; // the other choices were never forked
    retire(s, FinishReason.LENGTH);
  }

  private void deliverPromptLogprobs(RequestState state) {
    List<SampledToken> scored = Arrays.asList(state.promptLogprobs).subList(1, state.promptLogprobs.length);
    if (scored.contains(null)) {
      throw new IllegalStateException("prompt of " + state.request.id() + " computed, but position "
          + (scored.indexOf(null) + 1) + " has no logprob");
    }
    state.promptLogprobs = null;
    state.request.sink().onPromptLogprobs(List.copyOf(scored));
  }

  /**
   * Rules out ids the tokenizer lacks (a vocabulary padded past the tokenizer): their rows are
   * untrained, and a sampled one could not be detokenized.
   */
  private float[] sampleable(float[] row) {
    if (row.length > tokenizer.vocabSize()) {
      Arrays.fill(row, tokenizer.vocabSize(), row.length, Float.NEGATIVE_INFINITY);
    }
    return row;
  }

  private void fork(Sequence parent, float[] logits) {
    parent.forked = true;
    for (int choice = 1; choice < parent.request.n(); choice++) {
      Sequence child = newSequence(parent.state, choice);
      blocks.fork(parent, child);
      parent.state.live.add(child);
      scheduler.addForked(child);
      emit(child, logits.clone());
    }
  }

  /**
   * Samples and reports one token of {@code s} (appended to it), retiring {@code s} when it
   * finishes.
   *
   * @return true while {@code s} goes on
   */
  private boolean emit(Sequence s, float[] logits) {
    Set<Integer> ends = s.guideEnds;
    if (s.guide != null && !s.guide.mask(logits, ends)) {
      // the vocabulary cannot continue the constrained output (never for byte-level BPE)
      LOG.warning(() -> s + ": no token continues its constrained output; ending it");
      s.request.sink().onOutput(new ChoiceOutput(s.choice, List.of(), FinishReason.COMPLETE));
      retire(s, FinishReason.COMPLETE);
      return false;
    }
    SampledToken t = s.sampler.sample(logits);
    int id = t.tokenId();
    if (s.guide != null) {
      s.guide.advance(id, ends);
    }
    s.sampler.accept(id, false);
    s.append(id);
    s.outputTokens++;
    s.state.completionTokens++;
    long now = System.nanoTime();
    if (!s.state.firstTokenSeen) {
      s.state.firstTokenSeen = true;
      observer.firstToken(now - s.state.arrivalNanos);
    } else if (s.lastTokenNanos != 0) {
      observer.interToken(now - s.lastTokenNanos);
    }
    s.lastTokenNanos = now;
    observer.tokensGenerated(1);

    EngineRequest r = s.request;
    FinishReason finish = null;
    if (r.params().stopTokenIds().contains(id) || (!r.ignoreEos() && eosTokenIds.contains(id))) {
      finish = FinishReason.STOP;
    } else if (s.guide != null && s.guide.isComplete()) {
      finish = FinishReason.COMPLETE;
    } else if (s.outputTokens >= r.maxTokens()) {
      finish = FinishReason.LENGTH;
    }
    r.sink().onOutput(new ChoiceOutput(s.choice,
        List.of(new GeneratedToken(id, t.logprob(), t.top())), finish));
    if (finish != null) {
      retire(s, finish);
    }
    return finish == null;
  }

  /**
   * The tokens that may end a constrained output where it is complete: the stop token ids, and
   * the EOS tokens unless the request ignores EOS.
   */
  private Set<Integer> endTokens(EngineRequest r) {
    if (r.ignoreEos()) {
      return r.params().stopTokenIds();
    }
    Set<Integer> ends = new HashSet<>(eosTokenIds);
    ends.addAll(r.params().stopTokenIds());
    return Set.copyOf(ends);
  }

  /**
   * Retires choice {@code choice} of {@code state} as stopped (its client side found a stop
   * string); nothing if it already finished. Tokens it sampled meanwhile were dropped by the sink.
   */
  void finishChoice(RequestState state, int choice) {
    for (Sequence s : List.copyOf(state.live)) {
      if (s.choice == choice) {
        retire(s, FinishReason.STOP);
        return;
      }
    }
  }

  private void retire(Sequence s, FinishReason reason) {
    blocks.cacheAndRelease(s);
    scheduler.remove(s);
    RequestState state = s.state;
    state.live.remove(s);
    state.unfinishedChoices--;
    if (state.unfinishedChoices == 0) {
      requests.remove(s.request.id());
      observer.finished(reason, System.nanoTime() - state.arrivalNanos);
      s.request.sink().onComplete(new RequestUsage(s.promptLen, state.completionTokens,
          state.cachedTokens));
    }
  }

  /** Drops every choice of a request (client gone, failure, shutdown); no sink call. */
  void drop(RequestState state, FinishReason reason) {
    for (Sequence s : List.copyOf(state.live)) {
      if (reason == FinishReason.ERROR) {
        blocks.release(s);
      } else {
        blocks.cacheAndRelease(s);
      }
      scheduler.remove(s);
    }
    state.live.clear();
    requests.remove(state.request.id());
    observer.finished(reason, System.nanoTime() - state.arrivalNanos);
  }
}
