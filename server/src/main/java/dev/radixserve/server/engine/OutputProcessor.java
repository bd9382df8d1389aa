package dev.radixserve.server.engine;

import dev.radixserve.model.Tokenizer;
import dev.radixserve.model.sampling.SampledToken;
import dev.radixserve.model.sampling.SamplingParams;
import java.util.List;
import java.util.Map;

/**
 * After a forward: advances computed lengths, caches finished prefill chunks, forks the choices
 * of a request whose prompt is done, samples, detokenizes, applies stop conditions, reports to
 * sinks and observer, and retires finished sequences (blocks cached and released).
 */
final class OutputProcessor {

  private final Scheduler scheduler;
  private final SequenceBlocks blocks;
  private final SamplerFactory samplers;
  private final Tokenizer tokenizer;
  private final EngineObserver observer;
  private final Map<String, RequestState> requests;

  OutputProcessor(Scheduler scheduler, SequenceBlocks blocks, SamplerFactory samplers,
      Tokenizer tokenizer, EngineObserver observer, Map<String, RequestState> requests) {
    this.scheduler = scheduler;
    this.blocks = blocks;
    this.samplers = samplers;
    this.tokenizer = tokenizer;
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
    var sampler = samplers.create(seededFor(r.params(), choice));
    for (int t : r.promptTokens()) {
      sampler.accept(t, true);
    }
    return new Sequence(r, state, choice, sampler, new SequenceText(tokenizer, r.stop()));
  }

  static SamplingParams seededFor(SamplingParams p, int choice) {
    if (choice == 0 || p.seed() == null) {
      return p;
    }
    return new SamplingParams(p.temperature(), p.topK(), p.topP(), p.minP(), p.seed() + choice,
        p.repetitionPenalty(), p.presencePenalty(), p.frequencyPenalty(), p.stopTokenIds(),
        p.logprobs(), p.topLogprobs());
  }

  void process(ScheduledStep step, float[][] logits) {
    List<ScheduledStep.Chunk> chunks = step.chunks();
    for (int k = 0; k < chunks.size(); k++) {
      Sequence s = chunks.get(k).seq();
      blocks.copied(s);
      int start = s.numComputed;
      s.numComputed += chunks.get(k).tokens();
      int prefill = Math.min(s.prefillEnd, s.numComputed) - start;
      if (prefill > 0) {
        observer.promptTokensComputed(prefill);
        blocks.cacheComputed(s);
      }
      if (s.numComputed < s.length()) {
        continue; // mid-prompt chunk: its logits are not needed
      }
      if (s.choice == 0 && s.request.n() > 1 && !s.forked) {
        fork(s, logits[k]);
      }
      emit(s, logits[k]);
    }
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

  private void emit(Sequence s, float[] logits) {
    SampledToken t = s.sampler.sample(logits);
    int id = t.tokenId();
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
    String delta;
    int offset;
    if (r.params().stopTokenIds().contains(id) || (!r.ignoreEos() && id == tokenizer.eosTokenId())) {
      finish = FinishReason.STOP;
      offset = s.text.length();
      delta = s.text.finish();
    } else {
      SequenceText.Step step = s.text.add(id);
      delta = step.delta();
      offset = step.tokenOffset();
      if (step.stopped()) {
        finish = FinishReason.STOP;
      } else if (s.outputTokens >= r.maxTokens()) {
        finish = FinishReason.LENGTH;
        delta += s.text.finish();
      }
    }
    r.sink().onOutput(new ChoiceOutput(s.choice, delta,
        List.of(new GeneratedToken(id, t.logprob(), t.top(), offset)), finish));
    if (finish != null) {
      retire(s, finish);
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
