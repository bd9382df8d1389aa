package dev.radixserve.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.model.graph.GraphDtype;
import dev.radixserve.model.graph.PagedGpt2Graph;
import dev.radixserve.model.graph.PagedGraph;
import dev.radixserve.model.quant.QuantSpec;
import dev.radixserve.model.weights.GptWeights;
import dev.radixserve.model.weights.RandomGpt2;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The IOBinding runner with its pool in ONNX Runtime allocator memory, on the CPU: the code path
 * {@code --device cuda} takes, checked against the plain CPU runner.
 */
class BoundModelRunnerTest {

  // head size 16 and blocks of 16: what ONNX Runtime's CUDA kernel accepts too
  static final ModelConfig SMALL = new ModelConfig(2, 2, 32, 128, 97, 1e-5, "gelu_new");
  static final int BLOCK = 16;

  /** Prefill two prompts (one copies a partial block), then decode both: the batches compared. */
  static List<ForwardBatch> script(int[] a, int[] b, int decodeSteps, int[][] picks) {
    List<ForwardBatch> batches = new ArrayList<>();
    int[] ta = {3, 7, 1, 9};
    int[] tb = {3, 5, 12, 2};
    batches.add(new ForwardBatch(List.of(new ForwardBatch.Seq(a, 0, ta))));
    // b shares a's first 16 tokens (block 3) and 4 slots of a's block 7, copied into block 5
    batches.add(new ForwardBatch(List.of(new ForwardBatch.Seq(
        java.util.Arrays.copyOfRange(b, 20, b.length), 20, tb)),
        List.of(new ForwardBatch.BlockCopy(7, 5, 4))));
    for (int i = 0; i < decodeSteps; i++) {
      batches.add(new ForwardBatch(List.of(
          new ForwardBatch.Seq(new int[] {picks[0][i]}, a.length + i, ta),
          new ForwardBatch.Seq(new int[] {picks[1][i]}, b.length + i, tb))));
    }
    return batches;
  }

  static int[] prompt(int len, int seed) {
    return OnnxModelRunnerTest.prompt(len, seed);
  }

  static int[][] fixedPicks(int steps) {
    int[][] picks = new int[2][steps];
    for (int i = 0; i < steps; i++) {
      picks[0][i] = (i * 13 + 1) % 97;
      picks[1][i] = (i * 29 + 4) % 97;
    }
    return picks;
  }

  static int[] sharedPrefix(int[] a, int len) {
    int[] b = prompt(len, 9);
    System.arraycopy(a, 0, b, 0, 20);
    return b;
  }

  @Test
  void fp32OnTheCpuGivesThePlainRunnersBits() {
    assertPlainRunnersBits(RandomGpt2.create(SMALL, 5));
  }

  /** The bound runner in fp32 on the CPU computes the plain runner's bits (weights closed here). */
  static void assertPlainRunnersBits(ModelWeights weights) {
    int[] a = prompt(30, 1);
    int[] b = sharedPrefix(a, 27);
    List<ForwardBatch> batches = script(a, b, 6, fixedPicks(6));
    try (ModelWeights w = weights;
        OnnxModelRunner plain = OnnxModelRunner.create(w, BLOCK, 16, 1);
        BoundModelRunner bound = BoundModelRunner.create(w, Device.cpu(), BLOCK, 16, 1)) {
      for (ForwardBatch batch : batches) {
        float[][] expected = plain.forward(batch);
        float[][] actual = bound.forward(batch);
        assertEquals(expected.length, actual.length);
        for (int r = 0; r < expected.length; r++) {
          assertArrayEquals(expected[r], actual[r], 0f, "row " + r);
        }
      }
    }
  }

  /**
   * The device the suite targets: the CPU (with {@code cpuDtype}), or CUDA in the GPU run
   * ({@code -Dradixserve.test.device=cuda}).
   */
  static Device testDevice(GraphDtype cpuDtype) {
    return System.getProperty("radixserve.test.device", "cpu").equals("cuda")
        ? Device.cuda(0) : Device.cpu().withDtype(cpuDtype);
  }

  @Test
  void aStepBindsOnlyItsInputsAndTheLogitsRows() {
    assertStepTraffic(testDevice(GraphDtype.FLOAT32));
  }

  /** Per step exactly the step inputs go up and the logits rows come down; caches bound once. */
  static void assertStepTraffic(Device device) {
    int[] a = prompt(30, 1);
    int[] b = sharedPrefix(a, 27);
    List<ForwardBatch> batches = script(a, b, 3, fixedPicks(3));
    try (GptWeights w = RandomGpt2.create(SMALL, 5);
        BoundModelRunner runner = BoundModelRunner.create(w, device, BLOCK, 16, 1)) {
      for (ForwardBatch batch : batches) {
        runner.forward(batch);
        int t = batch.totalNewTokens();
        int s = batch.seqs().size();
        int rows = batch.logitRows();
        int maxBlocks = 0;
        for (ForwardBatch.Seq q : batch.seqs()) {
          maxBlocks = Math.max(maxBlocks, (q.totalLen() + BLOCK - 1) / BLOCK);
        }
        long copies = 0;
        for (ForwardBatch.BlockCopy c : batch.copies()) {
          copies += 2L * c.slots() * 2 * Long.BYTES; // (block, slot) pairs, source and target
        }
        // ids + positions (int64), block tables, cu_seqlens, past_lens (int32), logits_index
        // (int64), attention_metadata (2 x int32), copy indices
        long up = 16L * t + 4L * s * maxBlocks + 4L * (s + 1) + 4L * s + 8L * rows + 8 + copies;
        assertEquals(up, runner.lastTraffic().upBytes(), "bytes up");
        assertEquals((long) rows * SMALL.vocabSize() * Float.BYTES,
            runner.lastTraffic().downBytes(), "bytes down: the logits rows sampling reads");
      }
      for (int i = 0; i < SMALL.nLayer(); i++) {
        for (String cache : List.of(PagedGraph.keyCache(i), PagedGraph.valueCache(i),
            PagedGraph.keyCacheOut(i), PagedGraph.valueCacheOut(i))) {
          assertEquals(1, runner.binding().bindCount(cache), cache + " bound once, at creation");
        }
      }
      assertEquals(batches.size(), runner.binding().bindCount(PagedGpt2Graph.LOGITS));
    }
  }

  /**
   * The fp16 graph (what CUDA runs) on the CPU with the fp16 stand-in kernel gives the fp32
   * runner's greedy tokens, except where the fp32 logits nearly tie. Teacher-forced with the fp32
   * picks, so one near-tie does not derail the rest.
   */
  @Test
  void fp16GivesTheFp32GreedyTokensExceptAtNearTies() {
    assertGreedyParity(testDevice(GraphDtype.FLOAT16));
  }

  /**
   * {@code device}'s runner, teacher-forced with the fp32 CPU runner's greedy picks, picks the
   * same tokens except where the fp32 logits nearly tie (reported), and its logits are close but
   * not the fp32 bits.
   */
  static void assertGreedyParity(Device device) {
    assertGreedyParity(device, RandomGpt2.create(SMALL, 5));
  }

  /** As {@link #assertGreedyParity(Device)} for any family's weights (closed here). */
  static void assertGreedyParity(Device device, ModelWeights weights) {
    assertGreedyParity(device, weights, QuantSpec.none());
  }

  /**
   * As above, both runners' linear layers quantized as {@code quant} says: the reference is the
   * fp32 CPU runner at {@code accuracy_level} 0 (the quantized weights dequantized, fp32
   * arithmetic), so what is compared is how {@code device} multiplies by the same quantized
   * weights, not the quantization.
   */
  static void assertGreedyParity(Device device, ModelWeights weights, QuantSpec quant) {
    assertGreedyParity(device, weights, quant, null);
  }

  /**
   * As above for a checkpoint that comes quantized (GPTQ, AWQ), whose float original is {@code
   * unquantized} (the caller's): the quantization's own error is measured against that.
   */
  static void assertGreedyParity(Device device, ModelWeights weights, QuantSpec quant,
      ModelWeights unquantized) {
    int steps = 24;
    int[] a = prompt(30, 1);
    int[] b = sharedPrefix(a, 27);
    try (ModelWeights w = weights;
        OnnxModelRunner fp32 = OnnxModelRunner.create(w, BLOCK, 16, 1, Map.of(),
            quant.quantized() ? quant.withAccuracyLevel(0) : quant);
        BoundModelRunner fp16 = BoundModelRunner.create(w, device, BLOCK, 16, 1, quant)) {
      int[][] picks = new int[2][steps];
      List<ForwardBatch> prefill = script(a, b, 0, picks);
      int compared = 0;
      List<String> nearTies = new ArrayList<>();
      float[][] last = new float[2][];
      float[][] lastHalf = new float[2][];
      for (int k = 0; k < prefill.size(); k++) {
        last[k] = fp32.forward(prefill.get(k))[0];
        lastHalf[k] = fp16.forward(prefill.get(k))[0];
      }
      // really computed in fp16: close to the fp32 logits, but not the same bits
      assertTrue(!java.util.Arrays.equals(last[0], lastHalf[0]), "fp16 logits equal fp32 bits");
      double error = OnnxModelRunnerTest.relativeError(lastHalf[0], toDouble(last[0]));
      assertTrue(error < 0.02, "fp16 logits far from fp32: " + error);
      if (quant.quantized()) {
        // the device multiplied by the quantized weights, not by the checkpoint's: nearer the
        // quantized reference than the unquantized model is
        try (OnnxModelRunner plain = OnnxModelRunner.create(unquantized == null ? w : unquantized,
            BLOCK, 16, 1)) {
          double quantization = OnnxModelRunnerTest.relativeError(
              plain.forward(prefill.get(0))[0], toDouble(last[0]));
          System.out.println(quant + ": device " + error + ", quantization " + quantization);
          assertTrue(error * 3 < quantization, quant + ": the device's error " + error
              + " is not well below the quantization's own " + quantization);
        }
      }
      for (int i = 0; i <= steps; i++) {
        for (int q = 0; q < 2; q++) {
          int want = OnnxModelRunnerTest.argmax(last[q]);
          int got = OnnxModelRunnerTest.argmax(lastHalf[q]);
          compared++;
          if (want != got) {
            float gap = last[q][want] - last[q][got];
            nearTies.add("step " + i + " seq " + q + ": fp32 " + want + " vs fp16 " + got
                + ", fp32 gap " + gap);
            assertTrue(gap <= 0.05f * spread(last[q]), "not a near-tie: " + nearTies);
          }
          if (i < steps) {
            picks[q][i] = want;
          }
        }
        if (i == steps) {
          break;
        }
        ForwardBatch decode = script(a, b, i + 1, picks).getLast();
        float[][] x = fp32.forward(decode);
        float[][] y = fp16.forward(decode);
        last = x;
        lastHalf = y;
      }
      System.out.println(device + " vs fp32 greedy: " + compared + " picks, near-ties " + nearTies);
      assertTrue(nearTies.size() * 10 <= compared, "too many disagreements: " + nearTies);
    }
  }

  @Test
  void cudaOnTheCpuBuildFailsNamingWhatIsMissing() {
    try (GptWeights w = RandomGpt2.create(SMALL, 5)) {
      IllegalStateException e = org.junit.jupiter.api.Assertions.assertThrows(
          IllegalStateException.class,
          () -> BoundModelRunner.create(w, Device.cuda(0), BLOCK, 16, 1));
      assertTrue(e.getMessage().contains("no CUDA execution provider"), e.getMessage());
    }
  }

  private static double[] toDouble(float[] v) {
    double[] d = new double[v.length];
    for (int i = 0; i < v.length; i++) {
      d[i] = v[i];
    }
    return d;
  }

  private static float spread(float[] v) {
    float min = Float.POSITIVE_INFINITY;
    float max = Float.NEGATIVE_INFINITY;
    for (float x : v) {
      min = Math.min(min, x);
      max = Math.max(max, x);
    }
    return max - min;
  }
}
