package dev.radixserve.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.model.graph.GraphDtype;
import dev.radixserve.model.quant.CheckpointQuantization;
import dev.radixserve.model.quant.CheckpointQuantization.Method;
import dev.radixserve.model.quant.QuantMode;
import dev.radixserve.model.quant.QuantSpec;
import dev.radixserve.model.weights.DType;
import dev.radixserve.model.weights.GptWeights;
import dev.radixserve.model.weights.HfModelLoader;
import dev.radixserve.model.weights.RandomGpt2;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * GPT-2 checkpoints as AutoGPTQ saves them (each Conv1D quantized as the linear layer it
 * computes, under {@code transformer.h.N.attn.c_attn.qweight} and so on; {@link
 * PrequantizedCheckpoints}), loaded through {@link HfModelLoader}: the model computes what its
 * blocks decode to, exactly at fp32 compute with a float head, and near it with the CPU's
 * defaults.
 */
class PrequantizedGpt2Test {

  private static final int[] PROMPT = {5, 77, 13, 9, 25, 41, 18, 20, 3, 66, 12};
  private static final int[] TABLE = {5, 1, 12, 9};

  @TempDir
  Path dir;

  @ParameterizedTest(name = "{0} {1}-bit v{2}, symmetric {3}, act-order {4}, {5}")
  @CsvSource({"GPTQ, 4, 1, false, false, gelu_new", "GPTQ, 4, 1, false, true, gelu_new",
      "GPTQ, 8, 0, true, false, gelu", "GPTQ, 4, 0, true, true, gelu",
      "AWQ, 4, 0, false, false, gelu_new"})
  void servedBlocksComputeWhatTheyDecodeTo(Method method, int bits, int offset,
      boolean symmetric, boolean actOrder, String activation) {
    ModelConfig config = activation.equals("gelu") ? OnnxModelRunnerTest.TINY_ERF
        : OnnxModelRunnerTest.TINY;
    CheckpointQuantization q = new CheckpointQuantization(method, bits, 16, offset, actOrder);
    PrequantizedCheckpoints.Packed<GptWeights> packed;
    try (GptWeights model = RandomGpt2.create(config, 43)) {
      packed = PrequantizedCheckpoints.pack(model, q, symmetric);
    }
    PrequantizedCheckpoints.write(packed, dir, DType.F16, symmetric);
    QuantSpec exact = QuantSpec.forModel(QuantSpec.none(), q, 0, QuantSpec.HeadSetting.AUTO)
        .withHeadMode(QuantMode.NONE);
    QuantSpec served = QuantSpec.forModel(QuantSpec.none(), q, QuantSpec.CPU_ACCURACY_LEVEL,
        QuantSpec.HeadSetting.AUTO).resolvedFor(32);
    try (ModelWeights loaded = HfModelLoader.loadWeights(dir);
        OnnxModelRunner reference = OnnxModelRunner.create(packed.dequantized(), 4, 16, 1);
        OnnxModelRunner fp32Compute = OnnxModelRunner.create(loaded, 4, 16, 1, Map.of(), exact);
        OnnxModelRunner cpu = OnnxModelRunner.create(loaded, 4, 16, 1, Map.of(), served)) {
      assertEquals(q, loaded.checkpointQuantization());
      assertTrue(loaded.describe().contains("quantized   " + q.describe()), loaded.describe());
      // act-order: every layer's order here is a shuffle; c_attn, attn.c_proj and c_fc gather
      // their inputs, and the MLP's c_proj none: c_fc writes its outputs (and its bias, gathered
      // once at session start) in c_proj's input order
      var graph = loaded.graph().build(4, GraphDtype.FLOAT32, served);
      List<String> gathers = PrequantizedCheckpoints.actOrderGathers(graph, false);
      assertEquals(actOrder ? 3 * config.nLayer() : 0, gathers.size(), gathers.toString());
      assertTrue(gathers.stream().noneMatch(n -> n.contains("mlp.c_proj")), gathers.toString());
      assertEquals(actOrder ? config.nLayer() : 0,
          PrequantizedCheckpoints.actOrderGathers(graph, true).size());
      float[][] want = logits(reference);
      double exactError = OnnxModelRunnerTest.worstRelativeError(logits(fp32Compute), want);
      double servedError = OnnxModelRunnerTest.worstRelativeError(logits(cpu), want);
      System.out.printf("gpt2 %s %s: fp32 compute %.2e, served %.4f%n", activation,
          q.describe(), exactError, servedError);
      assertTrue(exactError < 1e-5, "fp32 compute: " + exactError);
      assertTrue(servedError > exactError && servedError < 0.05, "served: " + servedError);
    }
  }

  /**
   * The 16-bit graph (the plain operators, not the fused fp32 ones; CUDA's, and on the CPU its
   * fp16 stand-in) follows the fp32 runner on the same blocks, act-order gathers included.
   */
  @ParameterizedTest(name = "act-order {0}")
  @CsvSource({"true", "false"})
  void theFp16GraphFollowsTheFp32RunnerOnTheCheckpointsBlocks(boolean actOrder) {
    CheckpointQuantization q = new CheckpointQuantization(Method.GPTQ, 4, 16, 1, actOrder);
    try (GptWeights model = RandomGpt2.create(BoundModelRunnerTest.SMALL, 5)) {
      PrequantizedCheckpoints.write(PrequantizedCheckpoints.pack(model, q, false), dir,
          DType.F16, false);
      ModelWeights loaded = HfModelLoader.loadWeights(dir);
      BoundModelRunnerTest.assertGreedyParity(
          BoundModelRunnerTest.testDevice(GraphDtype.FLOAT16), loaded,
          QuantSpec.forModel(QuantSpec.none(), loaded.checkpointQuantization(), 0,
              QuantSpec.HeadSetting.AUTO).resolvedFor(32), model);
    }
  }

  private static float[][] logits(OnnxModelRunner runner) {
    return runner.forward(new ForwardBatch(List.of(new ForwardBatch.Seq(PROMPT, 0, TABLE, true))));
  }
}
