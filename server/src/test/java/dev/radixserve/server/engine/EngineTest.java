package dev.radixserve.server.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.cache.BlockPool;
import dev.radixserve.model.ForwardBatch;
import dev.radixserve.model.ModelConfig;
import dev.radixserve.model.ModelRunner;
import dev.radixserve.model.sampling.LogitsSampler;
import dev.radixserve.model.sampling.SamplingParams;
import dev.radixserve.model.tokenizer.TokenizerLoader;
import dev.radixserve.server.config.SchedulePolicy;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The engine thread with a fake model: who gets failed, and how a choice is finished. */
class EngineTest {

  private static final int VOCAB = ModelConfig.embeddedDefault().vocabSize();

  /** Fake model: the next token is always (last new token + 1) mod 1000. */
  private static final class FakeRunner implements ModelRunner {
    /** The ids {@link #prefetchRows} was asked for, in order. */
    final List<Integer> prefetched = new java.util.concurrent.CopyOnWriteArrayList<>();

    @Override
    public void prefetchRows(int[] ids, int from, int to) {
      for (int i = from; i < to; i++) {
        prefetched.add(ids[i]);
      }
    }

    @Override
    public ModelConfig config() {
      return ModelConfig.embeddedDefault();
    }

    @Override
    public int blockSize() {
      return 16;
    }

    @Override
    public int numBlocks() {
      return 16;
    }

    @Override
    public float[][] forward(ForwardBatch batch) {
      float[][] out = new float[batch.logitRows()][VOCAB];
      for (int i = 0; i < batch.seqs().size(); i++) {
        int[] t = batch.seqs().get(i).newTokens();
        out[batch.lastRow(i)][(t[t.length - 1] + 1) % 1000] = 10;
      }
      return out;
    }

    @Override
    public void close() {}
  }

  /** What a sink saw: the completion or the error, and how many tokens per choice. */
  private static class Result implements TokenSink {
    final CompletableFuture<String> end = new CompletableFuture<>();
    final int[] tokens = new int[16];

    @Override
    public void onOutput(ChoiceOutput o) {
      tokens[o.choice()] += o.tokens().size();
    }

    @Override
    public void onComplete(RequestUsage usage) {
      end.complete("complete " + usage.completionTokens());
    }

    @Override
    public void onError(int status, String message) {
      end.complete("error " + status);
    }
  }

  private static Engine engine() {
    return engine(new FakeRunner());
  }

  private static Engine engine(FakeRunner runner) {
    BlockPool pool = new BlockPool(16);
    Engine e = new Engine(runner, pool, Optional.empty(),
        TokenizerLoader.standard(), Set.of(TokenizerLoader.standard().eosTokenId()),
        p -> new LogitsSampler(p, VOCAB),
        new Engine.Settings(SchedulePolicy.FCFS, 4, 256, 64, 16), EngineObserver.NONE);
    e.start();
    return e;
  }

  private static EngineRequest request(String id, int promptLen, int n, int maxTokens,
      Result sink) {
    return new EngineRequest(id, id, IntStream.range(100, 100 + promptLen).toArray(),
        SamplingParams.greedy(), n, maxTokens, true, "", sink);
  }

  @Test
  void onlyTheRequestThatCanNeverFitIsFailed() throws Exception {
    Engine e = engine();
    Result tooManyChoices = new Result();
    Result tooLong = new Result();
    Result innocent = new Result();
    e.submit(request("n5", 4, 5, 2, tooManyChoices)); // n 5 > max-num-seqs 4
    e.submit(request("long", 300, 1, 2, tooLong));    // 19 blocks > 16
    e.submit(request("innocent", 4, 2, 3, innocent));
    assertEquals("complete 6", innocent.end.get(30, TimeUnit.SECONDS));
    assertEquals("error 400", tooManyChoices.end.get(30, TimeUnit.SECONDS));
    assertEquals("error 400", tooLong.end.get(30, TimeUnit.SECONDS));
    assertTrue(e.inspect().get(30, TimeUnit.SECONDS).quiescent());
    e.shutdown(Duration.ofSeconds(5));
  }

  /**
   * Each sampled token that a later step reads is handed to the runner's read-ahead as soon as it
   * is sampled; the last one, which no step reads, is not.
   */
  @Test
  void theRunnerIsAskedAheadForEachTokenTheNextStepReads() throws Exception {
    FakeRunner runner = new FakeRunner();
    Engine e = engine(runner);
    Result r = new Result();
    e.submit(request("r", 4, 1, 4, r)); // prompt 100..103; the model answers 104..107
    assertEquals("complete 4", r.end.get(30, TimeUnit.SECONDS));
    assertTrue(e.inspect().get(30, TimeUnit.SECONDS).quiescent());
    assertEquals(List.of(104, 105, 106), runner.prefetched);
    e.shutdown(Duration.ofSeconds(5));
  }

  @Test
  void finishChoiceEndsOneChoiceAndTheRequestCompletesWhenAllHave() throws Exception {
    Engine e = engine();
    Result r = new Result() {
      @Override
      public void onOutput(ChoiceOutput o) {
        super.onOutput(o);
        // as the HTTP layer does on a stop string; lands before the engine's next step
        e.finishChoice("r", o.choice());
      }
    };
    e.submit(request("r", 4, 2, 200, r));
    assertEquals("complete 2", r.end.get(30, TimeUnit.SECONDS)); // one token each, not 200
    assertEquals(1, r.tokens[0]);
    assertEquals(1, r.tokens[1]);
    e.finishChoice("r", 0); // after the end: nothing happens
    assertTrue(e.inspect().get(30, TimeUnit.SECONDS).quiescent());
    e.shutdown(Duration.ofSeconds(5));
  }
}
