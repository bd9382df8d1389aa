package dev.radixserve.model;

import static dev.radixserve.model.OnnxModelRunnerTest.prompt;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.radixserve.model.graph.GraphDtype;
import dev.radixserve.model.graph.KvDtype;
import dev.radixserve.model.quant.QuantSpec;
import dev.radixserve.model.weights.RandomGpt2;
import dev.radixserve.model.weights.RandomLlama;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The runner with its KV pool in each {@link KvDtype}, on GPT-2 and on a grouped-query Llama:
 * greedy tokens with the prefix cache on (full blocks shared, a partial block copied) are the
 * tokens with it off, and blocks exported and imported (the tiers' seam) keep their bits.
 */
class KvDtypeRunnerTest {

  private static final int BLOCK = 4;

  static List<Arguments> variants() {
    List<Arguments> out = new ArrayList<>();
    for (KvDtype kv : KvDtype.values()) {
      out.add(Arguments.of("gpt2", (Supplier<ModelWeights>) () ->
          RandomGpt2.create(OnnxModelRunnerTest.TINY, 11), kv));
      out.add(Arguments.of("llama-gqa", (Supplier<ModelWeights>) () -> RandomLlama.create(
          LlamaConfig.llama(2, 48, 6, 2, 64, 64, 97).withAttentionBias(), 11), kv));
    }
    return out;
  }

  private static OnnxModelRunner runner(ModelWeights weights, KvDtype kv) {
    return OnnxModelRunner.create(weights, BLOCK, 48, 1, Map.of(), QuantSpec.none(), kv);
  }

  private static int argmax(float[] logits) {
    int best = 0;
    for (int i = 1; i < logits.length; i++) {
      if (logits[i] > logits[best]) {
        best = i;
      }
    }
    return best;
  }

  /** Forwards {@code tokens} from {@code past} on, then decodes {@code steps} greedy tokens. */
  private static int[] greedy(OnnxModelRunner r, int[] tokens, int past, int[] table, int steps,
      List<float[]> logits) {
    float[] last = r.forward(new ForwardBatch(List.of(new ForwardBatch.Seq(
        Arrays.copyOfRange(tokens, past, tokens.length), past, table))))[0];
    int[] out = new int[steps];
    for (int i = 0; i < steps; i++) {
      logits.add(last);
      out[i] = argmax(last);
      if (i + 1 < steps) {
        last = r.forward(new ForwardBatch(List.of(new ForwardBatch.Seq(new int[] {out[i]},
            tokens.length + i, table))))[0];
      }
    }
    return out;
  }

  private static int[] table(int first, int n) {
    int[] t = new int[n];
    for (int i = 0; i < n; i++) {
      t[i] = first + i;
    }
    return t;
  }

  @ParameterizedTest(name = "{0} {2}")
  @MethodSource("variants")
  void cacheOnGivesCacheOffsGreedyTokens(String family, Supplier<ModelWeights> model,
      KvDtype kv) {
    int[] first = prompt(22, 3);
    int[] second = Arrays.copyOf(first, 26);
    for (int i = 17; i < 26; i++) {
      second[i] = (i * 13 + 4) % 97; // shares 17 tokens: 4 full blocks and 1 slot
    }
    int steps = 10;
    try (ModelWeights weights = model.get()) {
      List<float[]> offLogits = new ArrayList<>();
      int[] off;
      try (OnnxModelRunner r = runner(weights, kv)) {
        off = greedy(r, second, 0, table(20, 10), steps, offLogits);
      }
      List<float[]> onLogits = new ArrayList<>();
      int[] on;
      try (OnnxModelRunner r = runner(weights, kv)) {
        int[] firstTable = table(0, 9);
        greedy(r, first, 0, firstTable, 3, new ArrayList<>());
        // the cache's match: 4 full blocks shared, the 5th block's first slot copied
        int[] secondTable = table(30, 10);
        System.arraycopy(firstTable, 0, secondTable, 0, 4);
        r.kvPool().copyBlock(firstTable[4], secondTable[4], 1);
        on = greedy(r, second, 17, secondTable, steps, onLogits);
      }
      assertArrayEquals(off, on, family + " " + kv);
      for (int i = 0; i < steps; i++) {
        PagedConsistencyCases.assertClose(offLogits.get(i), onLogits.get(i), 1e-5);
      }
    }
  }

  @ParameterizedTest(name = "{0} {2}")
  @MethodSource("variants")
  void exportedAndImportedBlocksKeepTheirBits(String family, Supplier<ModelWeights> model,
      KvDtype kv) {
    int[] tokens = prompt(19, 9);
    try (ModelWeights weights = model.get(); Arena arena = Arena.ofConfined();
        OnnxModelRunner a = runner(weights, kv); OnnxModelRunner b = runner(weights, kv)) {
      assertEquals(KvPool.bytesPerBlock(weights.config(), BLOCK, kv), a.kvPool().blockBytes());
      int[] tableA = table(0, 6);
      a.forward(new ForwardBatch(List.of(new ForwardBatch.Seq(Arrays.copyOf(tokens, 16), 0,
          tableA))));
      // the 4 full blocks to b, at other ids, and back out again
      int[] tableB = {40, 33, 7, 21, 12, 13};
      MemorySegment buffer = arena.allocate(a.kvPool().blockBytes());
      MemorySegment again = arena.allocate(a.kvPool().blockBytes());
      for (int k = 0; k < 4; k++) {
        a.kvPool().exportBlock(tableA[k], buffer);
        b.kvPool().importBlock(tableB[k], buffer);
        b.kvPool().exportBlock(tableB[k], again);
        assertArrayEquals(buffer.toArray(ValueLayout.JAVA_BYTE),
            again.toArray(ValueLayout.JAVA_BYTE), "block " + k);
      }
      ForwardBatch.Seq restA = new ForwardBatch.Seq(Arrays.copyOfRange(tokens, 16, 19), 16,
          tableA);
      ForwardBatch.Seq restB = new ForwardBatch.Seq(Arrays.copyOfRange(tokens, 16, 19), 16,
          tableB);
      assertArrayEquals(a.forward(new ForwardBatch(List.of(restA)))[0],
          b.forward(new ForwardBatch(List.of(restB)))[0], family + " " + kv);
    }
  }

  @Test
  void narrowerTypesHoldMoreBlocksInABudget() {
    ModelShape c = OnnxModelRunnerTest.TINY; // 2 layers, 2 heads of 16
    long fp32 = KvPool.bytesPerBlock(c, 16, KvDtype.FLOAT32);
    assertEquals(2L * 2 * 16 * 32 * 4, fp32);
    assertEquals(fp32 / 2, KvPool.bytesPerBlock(c, 16, KvDtype.BFLOAT16));
    assertEquals(fp32 / 2, KvPool.bytesPerBlock(c, 16, KvDtype.FLOAT16));
    // a scale per token and head: 16 codes + 4 bytes per head row
    assertEquals(2L * 2 * 16 * 2 * (16 + 4), KvPool.bytesPerBlock(c, 16, KvDtype.INT8));
    assertEquals(KvPool.bytesPerBlock(c, 16, KvDtype.INT8),
        KvPool.bytesPerBlock(c, 16, KvDtype.FP8));
    assertEquals(10, KvPool.blocksFor(c, 16, 10 * fp32, KvDtype.FLOAT32));
    assertEquals(20, KvPool.blocksFor(c, 16, 10 * fp32, KvDtype.FLOAT16));
    assertEquals(32, KvPool.blocksFor(c, 16, 10 * fp32, KvDtype.INT8)); // 81920 / 2560
  }

  @Test
  void devicesRefuseTheTypesTheirKernelsCannotRead() {
    assertEquals(KvDtype.INT8, Device.cpu().requireKvDtype(KvDtype.INT8));
    assertEquals(KvDtype.FLOAT16, Device.cuda(0).requireKvDtype(KvDtype.FLOAT16));
    assertEquals("kv-cache-dtype int8 is not available on cuda with dtype float16: ONNX Runtime's"
        + " CUDA PagedAttention reads int8 caches only with static per-tensor or per-channel"
        + " scales calibrated ahead of time (k_scale/v_scale); the per-row scales of"
        + " kv-cache-dtype int8 are written by radixserve's CPU kernel only (use auto or"
        + " float16)", assertThrows(IllegalArgumentException.class,
            () -> Device.cuda(0).requireKvDtype(KvDtype.INT8)).getMessage());
    assertEquals("kv-cache-dtype float32 is not available on cuda with dtype bfloat16: ONNX"
        + " Runtime's CUDA PagedAttention has no float32 cache (use auto or bfloat16)",
        assertThrows(IllegalArgumentException.class, () -> Device.cuda(0)
            .withDtype(GraphDtype.BFLOAT16).requireKvDtype(KvDtype.FLOAT32)).getMessage());
    assertEquals("kv-cache-dtype bfloat16 is not available on cuda with dtype float16: on CUDA"
        + " the cache is kept in the graph's dtype (use auto or float16)",
        assertThrows(IllegalArgumentException.class,
            () -> Device.cuda(0).requireKvDtype(KvDtype.BFLOAT16)).getMessage());
    assertEquals("kv-cache-dtype fp8 needs the fp32 CPU graph (dtype float32); the float16 CPU"
        + " graph stores its KV cache in float16", assertThrows(IllegalArgumentException.class,
            () -> Device.cpu().withDtype(GraphDtype.FLOAT16).requireKvDtype(KvDtype.FP8))
        .getMessage());
  }
}
