package dev.radixserve.server.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.cache.BlockPool;
import dev.radixserve.cache.PrefixCache;
import dev.radixserve.cache.RadixCache;
import dev.radixserve.model.ForwardBatch;
import dev.radixserve.model.ModelConfig;
import dev.radixserve.model.ModelRunner;
import dev.radixserve.model.OnnxModelRunner;
import dev.radixserve.model.Tokenizer;
import dev.radixserve.model.sampling.LogitsSampler;
import dev.radixserve.model.sampling.SamplingParams;
import dev.radixserve.model.tokenizer.TokenizerLoader;
import dev.radixserve.model.weights.GptWeights;
import dev.radixserve.model.weights.RandomGpt2;
import dev.radixserve.server.config.SchedulePolicy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A step the paged-attention kernel refuses (through ONNX Runtime, the real runner) fails exactly
 * the requests in that step, with the kernel's message; the engine keeps serving and every block
 * comes back.
 */
class KernelFaultTest {

  private static final int MARKER = 777;

  /**
   * Hands the kernel a corrupt step whenever a prompt starting with {@link #MARKER} is prefilled
   * beside another new sequence: the marked sequence's first block becomes the other's, so two
   * sequences write the same slots. Only the kernel (not the runner's own checks) can see that.
   */
  private record CorruptingRunner(ModelRunner delegate) implements ModelRunner {
    @Override
    public float[][] forward(ForwardBatch batch) {
      List<ForwardBatch.Seq> seqs = new ArrayList<>(batch.seqs());
      for (int i = 0; i < seqs.size(); i++) {
        ForwardBatch.Seq s = seqs.get(i);
        if (s.pastLen() == 0 && s.newTokens()[0] == MARKER) {
          for (ForwardBatch.Seq other : seqs) {
            if (other != s && other.pastLen() == 0) {
              int[] table = s.blockTable().clone();
              table[0] = other.blockTable()[0];
              seqs.set(i, new ForwardBatch.Seq(s.newTokens(), 0, table, s.allLogits()));
              break;
            }
          }
        }
      }
      return delegate.forward(new ForwardBatch(seqs, batch.copies()));
    }

    @Override
    public dev.radixserve.model.ModelShape config() {
      return delegate.config();
    }

    @Override
    public int blockSize() {
      return delegate.blockSize();
    }

    @Override
    public int numBlocks() {
      return delegate.numBlocks();
    }

    @Override
    public void close() {
      delegate.close();
    }
  }

  /** Completes with "ok" or the error it got. */
  private static EngineRequest request(String id, int[] prompt, Map<String, String> results,
      CompletableFuture<Void> done) {
    return new EngineRequest(id, id, prompt, SamplingParams.greedy(), 1, 4, true, "",
        new TokenSink() {
          @Override
          public void onOutput(ChoiceOutput output) {}

          @Override
          public void onComplete(RequestUsage usage) {
            results.put(id, "ok");
            done.complete(null);
          }

          @Override
          public void onError(int httpStatus, String message) {
            results.put(id, httpStatus + " " + message);
            done.complete(null);
          }
        });
  }

  @Test
  void aRefusedStepFailsOnlyItsRequestsAndTheEngineKeepsServing() throws Exception {
    Tokenizer tokenizer = TokenizerLoader.standard();
    ModelConfig config = new ModelConfig(2, 2, 32, 128, tokenizer.vocabSize(), 1e-5, "gelu_new");
    try (GptWeights weights = RandomGpt2.create(config, 1);
        ModelRunner runner = new CorruptingRunner(OnnxModelRunner.create(weights, 16, 32, 1))) {
      BlockPool pool = new BlockPool(runner.numBlocks());
      Engine engine = new Engine(runner, pool,
          Optional.<PrefixCache>of(new RadixCache(pool, 16, dev.radixserve.cache.EvictionPolicy.lru())),
          tokenizer, java.util.Set.of(tokenizer.eosTokenId()),
          p -> new LogitsSampler(p, tokenizer.vocabSize()),
          new Engine.Settings(SchedulePolicy.FCFS, 8, 256, 256, 16), EngineObserver.NONE);
      Map<String, String> results = new ConcurrentHashMap<>();
      CompletableFuture<Void> bad = new CompletableFuture<>();
      CompletableFuture<Void> innocent = new CompletableFuture<>();
      // both queued before the engine starts: admitted into the same first step
      engine.submit(request("bad", new int[] {MARKER, 5, 6, 7, 8}, results, bad));
      engine.submit(request("same-step", new int[] {9, 10, 11}, results, innocent));
      engine.start();
      CompletableFuture.allOf(bad, innocent).get(60, TimeUnit.SECONDS);
      for (String id : List.of("bad", "same-step")) {
        String r = results.get(id);
        assertTrue(r.startsWith("500 model forward failed: ") && r.contains("PagedAttention: ")
            && r.contains("is written twice in one step"), id + ": " + r);
      }
      CompletableFuture<Void> later = new CompletableFuture<>();
      engine.submit(request("later", new int[] {12, 13, 14, 15}, results, later));
      later.get(60, TimeUnit.SECONDS);
      assertEquals("ok", results.get("later"));
      EngineSnapshot s = engine.inspect().get(10, TimeUnit.SECONDS);
      assertNull(s.integrityError());
      assertTrue(s.quiescent(), s.toString());
      engine.shutdown(Duration.ofSeconds(5));
    }
  }
}
