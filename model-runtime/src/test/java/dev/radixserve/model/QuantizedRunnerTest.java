package dev.radixserve.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.model.graph.GraphDtype;
import dev.radixserve.model.quant.QuantMode;
import dev.radixserve.model.quant.QuantSpec;
import dev.radixserve.model.weights.DType;
import dev.radixserve.model.weights.GptWeights;
import dev.radixserve.model.weights.HfModelLoader;
import dev.radixserve.model.weights.HfModelWriter;
import dev.radixserve.model.weights.LoadedModel;
import dev.radixserve.model.weights.RandomGpt2;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A whole model quantized at load from a BF16, sharded, untied-head checkpoint on disk: its
 * logits stay near the fp32 model's (max |Δ| / max |logit| measured 0.011–0.016 for int8,
 * 0.16–0.18 for int4 on these random weights; the bounds are about twice that), and the
 * same prompt computed in one chunk or in three (paged, with the cache's block-table shapes)
 * gives the same bits, as the prefix cache needs within a mode.
 */
class QuantizedRunnerTest {

  static final ModelConfig C = new ModelConfig(2, 2, 64, 64, 260, 1e-5, "gelu_new")
      .withUntiedHead();

  @TempDir
  Path dir;

  @ParameterizedTest(name = "{0}, LM head {1}, zero points {2}")
  @CsvSource({"INT8, true, false, 0.04", "INT8, false, true, 0.04", "INT4, false, false, 0.35",
      "INT4, true, true, 0.35"})
  void quantizedLogitsStayNearFp32AndChunkingChangesNoBit(QuantMode mode, boolean head,
      boolean zeroPoints, double bound) {
    try (GptWeights w = RandomGpt2.create(C, 31)) {
      HfModelWriter.writeSharded(w, dir, DType.BF16, 2);
    }
    HfModelWriter.writeByteLevelTokenizer(dir);
    QuantSpec spec = QuantSpec.of(mode).withLmHead(head).withZeroPoints(zeroPoints);
    try (LoadedModel m = HfModelLoader.load(dir);
        OnnxModelRunner fp32 = OnnxModelRunner.create(m.weights(), 4, 16, 1);
        OnnxModelRunner quant = OnnxModelRunner.create(m.weights(), 4, 16, 1, Map.of(), spec)) {
      int[] prompt = m.tokenizer().encode("Quantized weights, measured not assumed.");
      int[] table = {5, 1, 12, 9, 3, 14, 0, 7, 10, 2, 13, 6};
      float[][] reference = fp32.forward(new ForwardBatch(List.of(
          new ForwardBatch.Seq(prompt, 0, table, true))));
      float[][] whole = quant.forward(new ForwardBatch(List.of(
          new ForwardBatch.Seq(prompt, 0, table, true))));
      double worst = OnnxModelRunnerTest.worstRelativeError(whole, reference);
      assertTrue(worst > 0, "the quantized model computes something else than fp32");
      assertTrue(worst <= bound, mode + ": relative error " + worst + " > " + bound);

      int a = prompt.length / 3;
      int b = 2 * prompt.length / 3;
      int[] table2 = {8, 11, 4, 15, 2, 9, 6, 13, 0, 3, 1, 12};
      quant.forward(new ForwardBatch(List.of(new ForwardBatch.Seq(
          java.util.Arrays.copyOfRange(prompt, 0, a), 0, table2))));
      quant.forward(new ForwardBatch(List.of(new ForwardBatch.Seq(
          java.util.Arrays.copyOfRange(prompt, a, b), a, table2))));
      float[] last = quant.forward(new ForwardBatch(List.of(new ForwardBatch.Seq(
          java.util.Arrays.copyOfRange(prompt, b, prompt.length), b, table2))))[0];
      assertArrayEquals(whole[prompt.length - 1], last, 0f, "chunked prefill, bit for bit");
    }
  }

  /**
   * The defaults, and the blocks that need an even row count, on a model wide enough for large
   * blocks (K = 256 and 1,024, 4 heads of 64): the same prompt in one chunk, in three, and one
   * token per step (as decode steps compute it) gives the same bits. Without the graph's even
   * rows ({@link QuantSpec#evenRows}) int4 in blocks of 32 gave a one-token step other bits than
   * the same position in a prefill, and int8 in blocks of 128 a chunked prefill other bits than a
   * whole one (the 7th digit): ONNX Runtime's kernels compute an odd call's last row with another
   * summation order than the rows they take in pairs.
   */
  @ParameterizedTest(name = "{0}, block {1}")
  @CsvSource({"INT8, 0", "INT4, 0", "INT4, 32", "INT4, 128", "INT8, 128"})
  void theBlocksOfAWideModelGiveTheSameBitsInAnyChunking(QuantMode mode, int block) {
    ModelConfig wide = new ModelConfig(1, 4, 256, 64, 260, 1e-5, "gelu_new").withUntiedHead();
    try (GptWeights w = RandomGpt2.create(wide, 31)) {
      HfModelWriter.writeSharded(w, dir, DType.BF16, 1);
    }
    HfModelWriter.writeByteLevelTokenizer(dir);
    QuantSpec spec = block == 0 ? QuantSpec.of(mode)
        : QuantSpec.of(mode).withBlockSize(block).withHeadBlockSize(block);
    try (LoadedModel m = HfModelLoader.load(dir);
        OnnxModelRunner quant = OnnxModelRunner.create(m.weights(), 4, 16, 1, Map.of(), spec)) {
      int[] prompt = m.tokenizer().encode("Quantized weights, measured not assumed.");
      int[] table = {5, 1, 12, 9, 3, 14, 0, 7, 10, 2, 13, 6};
      float[][] whole = quant.forward(new ForwardBatch(List.of(
          new ForwardBatch.Seq(prompt, 0, table, true))));
      int[] table2 = {8, 11, 4, 15, 2, 9, 6, 13, 0, 3, 1, 12};
      float[] last = null;
      for (int i = 0; i < 3; i++) {
        int a = i * prompt.length / 3;
        int b = (i + 1) * prompt.length / 3;
        last = quant.forward(new ForwardBatch(List.of(new ForwardBatch.Seq(
            java.util.Arrays.copyOfRange(prompt, a, b), a, table2))))[0];
      }
      assertArrayEquals(whole[prompt.length - 1], last, 0f, mode + ": chunked, bit for bit");
      for (int p = 0; p < prompt.length; p++) {
        last = quant.forward(new ForwardBatch(List.of(new ForwardBatch.Seq(
            new int[] {prompt[p]}, p, table))))[0];
      }
      assertArrayEquals(whole[prompt.length - 1], last, 0f,
          mode + ": one token a step, bit for bit");
    }
  }

  /**
   * The IOBinding runner (the one CUDA uses) in fp16, here on the CPU: MatMulNBits with fp16
   * activations and fp16 scales (the graph's type) stays near the same runner unquantized.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource({"INT8, 0.04", "INT4, 0.35"})
  void fp16GraphsQuantizeWithScalesInTheirOwnType(QuantMode mode, double bound) {
    Device half = Device.cpu().withDtype(GraphDtype.FLOAT16);
    try (GptWeights w = RandomGpt2.create(C, 32);
        BoundModelRunner plain = BoundModelRunner.create(w, half, 4, 16, 1);
        BoundModelRunner quant = BoundModelRunner.create(w, half, 4, 16, 1,
            QuantSpec.of(mode).withAccuracyLevel(0))) {
      int[] prompt = {17, 3, 99, 250, 4, 61, 8, 120, 33};
      int[] table = {2, 7, 11};
      ForwardBatch batch = new ForwardBatch(List.of(new ForwardBatch.Seq(prompt, 0, table)));
      float[] expected = plain.forward(batch)[0];
      float[] actual = quant.forward(batch)[0];
      double[] ref = new double[expected.length];
      for (int i = 0; i < ref.length; i++) {
        ref[i] = expected[i];
      }
      double err = OnnxModelRunnerTest.relativeError(actual, ref);
      assertTrue(err > 0 && err <= bound, mode + " in fp16: relative error " + err);
    }
  }
  /**
   * The runner CUDA uses, in fp16, on the suite's device (the CPU here, CUDA in the GPU run),
   * multiplies by the quantized weights as the fp32 CPU runner does at {@code accuracy_level} 0:
   * the same greedy tokens except at near-ties, teacher-forced through a shared prefix with a
   * copied block and 24 decode steps. The level is the one the server gives that device.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource({"INT8", "INT4"})
  void fp16QuantizedGreedyFollowsTheFp32RunnerOnTheSameQuantizedWeights(QuantMode mode) {
    BoundModelRunnerTest.assertGreedyParity(
        BoundModelRunnerTest.testDevice(GraphDtype.FLOAT16),
        RandomGpt2.create(BoundModelRunnerTest.SMALL, 5), QuantSpec.of(mode).withAccuracyLevel(0));
  }
}
