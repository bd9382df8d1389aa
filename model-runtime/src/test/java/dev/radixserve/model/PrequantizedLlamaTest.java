package dev.radixserve.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.model.quant.CheckpointQuantization;
import dev.radixserve.model.quant.CheckpointQuantization.Method;
import dev.radixserve.model.quant.QuantMode;
import dev.radixserve.model.quant.QuantSpec;
import dev.radixserve.model.quant.QuantizationException;
import dev.radixserve.model.weights.DType;
import dev.radixserve.model.weights.HfModelLoader;
import dev.radixserve.model.weights.HfModelWriter;
import dev.radixserve.model.weights.LlamaWeights;
import dev.radixserve.model.weights.ModelLoadException;
import dev.radixserve.model.weights.RandomLlama;
import dev.radixserve.model.weights.Tensor;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * GPTQ and AWQ checkpoints of every Llama-family architecture, written to disk as those tools
 * save them ({@link PrequantizedCheckpoints}) and loaded through {@link HfModelLoader}: served
 * through MatMulNBits on the checkpoint's own blocks, the model computes what its blocks decode
 * to. With fp32 compute ({@code accuracy_level} 0) and a float head the logits equal the decoded
 * float model's to fp32 rounding; with the CPU's defaults (int8 activations, an int8 head) they
 * stay near them.
 */
class PrequantizedLlamaTest {

  private static final int[] PROMPT = {5, 77, 130, 9, 250, 41, 18, 200, 3, 66, 121};
  private static final int[] TABLE = {5, 1, 12, 9};

  @TempDir
  Path dir;

  @ParameterizedTest(name = "{0} {1} {2}-bit v{3}, symmetric {4}, act-order {5}")
  @CsvSource({"llama, GPTQ, 4, 1, false, false", "llama, AWQ, 4, 0, false, false",
      "llama, GPTQ, 4, 1, false, true", "qwen2, GPTQ, 8, 1, true, false",
      "qwen2, AWQ, 4, 0, false, false", "qwen3, GPTQ, 4, 0, false, false",
      "qwen3, AWQ, 4, 0, false, false", "qwen3, GPTQ, 4, 1, true, true",
      "mistral, GPTQ, 4, 1, true, false", "mistral, GPTQ, 8, 0, false, false",
      "mistral, GPTQ, 8, 0, false, true"})
  void servedBlocksComputeWhatTheyDecodeTo(String family, Method method, int bits, int offset,
      boolean symmetric, boolean actOrder) {
    CheckpointQuantization q = new CheckpointQuantization(method, bits, 16, offset, actOrder);
    PrequantizedCheckpoints.Packed<LlamaWeights> packed;
    try (LlamaWeights model = RandomLlama.create(LlamaFamilies.of(family), 41)) {
      packed = PrequantizedCheckpoints.pack(model, q, symmetric);
    }
    PrequantizedCheckpoints.write(packed, dir, DType.F16, symmetric);
    QuantSpec exact = QuantSpec.forModel(QuantSpec.none(), q, 0, QuantSpec.HeadSetting.AUTO)
        .withHeadMode(QuantMode.NONE);
    QuantSpec served = QuantSpec.forModel(QuantSpec.none(), q, QuantSpec.CPU_ACCURACY_LEVEL,
        QuantSpec.HeadSetting.AUTO)
        .resolvedFor(32);
    assertEquals(method.label() + (bits == 4 ? "-int4/b16/asym/acc4/head-int8-b32"
        : "-int8/b16/asym/acc4/head-b32"), served.key());
    try (ModelWeights loaded = HfModelLoader.loadWeights(dir);
        OnnxModelRunner reference = OnnxModelRunner.create(packed.dequantized(), 4, 16, 1);
        OnnxModelRunner fp32Compute = OnnxModelRunner.create(loaded, 4, 16, 1, Map.of(), exact);
        OnnxModelRunner cpu = OnnxModelRunner.create(loaded, 4, 16, 1, Map.of(), served)) {
      assertEquals(q, loaded.checkpointQuantization());
      // act-order: q/k/v share an input order, gate/up theirs, and down_proj's input comes in
      // its order from gate/up: three gathers a layer, not seven
      int gathers = PrequantizedCheckpoints.actOrderGathers(loaded.graph().build(4,
          dev.radixserve.model.graph.GraphDtype.FLOAT32, served), false).size();
      assertEquals(actOrder ? 3 * LlamaFamilies.of(family).nLayer() : 0, gathers);
      float[][] want = logits(reference);
      double exactError = OnnxModelRunnerTest.worstRelativeError(logits(fp32Compute), want);
      double servedError = OnnxModelRunnerTest.worstRelativeError(logits(cpu), want);
      System.out.printf("%s %s: fp32 compute %.2e, served %.4f%n", family, q.describe(),
          exactError, servedError);
      assertTrue(exactError < 1e-5, "fp32 compute: " + exactError);
      assertTrue(servedError > exactError && servedError < 0.05, "served: " + servedError);
    }
  }

  /**
   * The fp16 graph (CUDA's; on the CPU its fp16 stand-in) of a GPTQ or AWQ checkpoint, act-order
   * gathers and fp16 scales included, picks the fp32 runner's greedy tokens on the same blocks
   * except at near-ties, and its error is well below the quantization's own (measured against
   * the float model the checkpoint was made from). In the GPU run this runs on CUDA.
   */
  @ParameterizedTest(name = "{0} act-order {1}")
  @CsvSource({"GPTQ, true", "AWQ, false"})
  void theFp16GraphFollowsTheFp32RunnerOnTheCheckpointsBlocks(Method method, boolean actOrder) {
    CheckpointQuantization q = new CheckpointQuantization(method, 4, 16,
        method == Method.GPTQ ? 1 : 0, actOrder);
    try (LlamaWeights model = RandomLlama.create(LlamaFamilies.of("llama"), 5)) {
      PrequantizedCheckpoints.write(PrequantizedCheckpoints.pack(model, q, false), dir, DType.F16,
          false);
      ModelWeights loaded = HfModelLoader.loadWeights(dir);
      BoundModelRunnerTest.assertGreedyParity(BoundModelRunnerTest.testDevice(
          dev.radixserve.model.graph.GraphDtype.FLOAT16), loaded,
          QuantSpec.forModel(QuantSpec.none(), loaded.checkpointQuantization(), 0,
              QuantSpec.HeadSetting.AUTO)
              .resolvedFor(32), model);
    }
  }

  @Test
  void aGroupIndexThatIsNoGroupingIsRefusedAtLoadNamingTheLayer() {
    CheckpointQuantization q = new CheckpointQuantization(Method.GPTQ, 4, 16, 1);
    PrequantizedCheckpoints.Packed<LlamaWeights> packed;
    try (LlamaWeights model = RandomLlama.create(LlamaFamilies.GQA, 41)) {
      packed = PrequantizedCheckpoints.pack(model, q, false);
    }
    Map<String, Tensor> tensors = new LinkedHashMap<>(packed.stored().tensors());
    String name = "layers.1.mlp.down_proj.g_idx";
    int[] twoGroups = new int[48];
    for (int k = 0; k < twoGroups.length; k++) {
      twoGroups[k] = k % 2; // 24 inputs in each of two groups, none in the third
    }
    tensors.put(name, PrequantizedCheckpoints.ints(name, new long[] {48}, twoGroups));
    PrequantizedCheckpoints.write(new PrequantizedCheckpoints.Packed<>(
        new LlamaWeights(LlamaFamilies.GQA, q, tensors, null), packed.dequantized()), dir,
        DType.F16, false);
    ModelLoadException e = assertThrows(ModelLoadException.class,
        () -> HfModelLoader.loadWeights(dir));
    assertTrue(e.getMessage().contains(name + " puts input 32 in group 0: the layer has 3 groups"
        + " of 16 inputs"), e.getMessage());
  }

  /**
   * Checkpoints written before Hugging Face read quantized ones carry no quantization_config:
   * AutoGPTQ's quantize_config.json and AutoAWQ's quant_config.json say it instead (the contents
   * as those tools write them).
   */
  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "GPTQ|quantize_config.json|{\"bits\": 4, \"group_size\": 16, \"damp_percent\": 0.01,"
          + " \"desc_act\": true, \"sym\": true, \"true_sequential\": true,"
          + " \"model_name_or_path\": null, \"model_file_base_name\": \"model\"}",
      "AWQ|quant_config.json|{\"zero_point\": true, \"q_group_size\": 16, \"w_bit\": 4,"
          + " \"version\": \"GEMM\"}"})
  void aLegacyQuantizationFileSaysWhatTheConfigDoesNot(Method method, String file, String json)
      throws Exception {
    CheckpointQuantization q = new CheckpointQuantization(method, 4, 16,
        method == Method.GPTQ ? 1 : 0);
    try (LlamaWeights model = RandomLlama.create(LlamaFamilies.GQA, 41)) {
      PrequantizedCheckpoints.write(PrequantizedCheckpoints.pack(model, q, true), dir, DType.F16,
          true);
    }
    Path config = dir.resolve("config.json");
    var mapper = new com.fasterxml.jackson.databind.ObjectMapper();
    var node = (com.fasterxml.jackson.databind.node.ObjectNode) mapper.readTree(config.toFile());
    node.remove("quantization_config");
    mapper.writeValue(config.toFile(), node);
    java.nio.file.Files.writeString(dir.resolve(file), json);
    try (ModelWeights loaded = HfModelLoader.loadWeights(dir)) {
      assertEquals(q, loaded.checkpointQuantization());
    }
    java.nio.file.Files.writeString(dir.resolve(file), json.replace("4", "3"));
    ModelLoadException e = assertThrows(ModelLoadException.class,
        () -> HfModelLoader.loadWeights(dir));
    assertEquals(dir.resolve(file), e.file());
    assertTrue(e.getMessage().contains(" bits 3 is not supported"), e.getMessage());
  }

  /**
   * An act-order checkpoint whose one permuted layer is layer 1's o_proj: only that product
   * gathers its input (a gather with its inputs in place would copy T×K floats for nothing), and
   * the model still computes what its blocks decode to.
   */
  @Test
  void onlyTheLayersWhoseGroupsAreOutOfOrderGatherTheirInputs() {
    CheckpointQuantization q = new CheckpointQuantization(Method.GPTQ, 4, 16, 1, true);
    PrequantizedCheckpoints.Packed<LlamaWeights> packed;
    try (LlamaWeights model = RandomLlama.create(LlamaFamilies.GQA, 41)) {
      packed = PrequantizedCheckpoints.pack(model, q, false,
          module -> module.equals("layers.1.self_attn.o_proj"));
    }
    PrequantizedCheckpoints.write(packed, dir, DType.F16, false);
    double error = fp32ComputeError(packed, q,
        List.of("layers.1.self_attn.o_proj.weight.input_order"));
    assertTrue(error < 1e-5, "fp32 compute: " + error);
  }

  /**
   * An act-order Llama with {@code mlp_bias}: gate/up still write their outputs in down_proj's
   * input order, their biases permuted alike (a Gather of initializers, folded at session start),
   * so down_proj gathers nothing; three activation gathers a layer, and the model computes what
   * its blocks decode to.
   */
  @Test
  void anMlpBiasFollowsItsProjectionsOutputOrder() {
    LlamaConfig c = new LlamaConfig("llama", LlamaFamilies.GQA.nLayer(),
        LlamaFamilies.GQA.hiddenSize(), LlamaFamilies.GQA.nHeads(), LlamaFamilies.GQA.kvHeads(),
        LlamaFamilies.GQA.headDim(), LlamaFamilies.GQA.intermediateSize(),
        LlamaFamilies.GQA.nPositions(), LlamaFamilies.GQA.vocabSize(),
        LlamaFamilies.GQA.rmsNormEps(), LlamaFamilies.GQA.rope(), true, true, true, false, false);
    CheckpointQuantization q = new CheckpointQuantization(Method.GPTQ, 4, 16, 1, true);
    PrequantizedCheckpoints.Packed<LlamaWeights> packed;
    try (LlamaWeights model = RandomLlama.create(c, 41)) {
      packed = PrequantizedCheckpoints.pack(model, q, false);
    }
    PrequantizedCheckpoints.write(packed, dir, DType.F16, false);
    List<String> gathers = new java.util.ArrayList<>();
    for (int i = 0; i < c.nLayer(); i++) {
      for (String m : List.of("self_attn.q_proj", "self_attn.o_proj", "mlp.gate_proj")) {
        gathers.add("layers." + i + "." + m + ".weight.input_order");
      }
    }
    double error = fp32ComputeError(packed, q, gathers);
    assertTrue(error < 1e-5, "fp32 compute: " + error);
    try (ModelWeights loaded = HfModelLoader.loadWeights(dir)) {
      assertEquals(2 * c.nLayer(), PrequantizedCheckpoints.actOrderGathers(loaded.graph().build(4,
          dev.radixserve.model.graph.GraphDtype.FLOAT32, QuantSpec.forModel(QuantSpec.none(), q,
              0, QuantSpec.HeadSetting.AUTO)), true).size(), "gate and up biases, permuted");
    }
  }

  /** Some GPTQ exporters write g_idx only under act-order: without it, groups are plain. */
  @Test
  void aGptqCheckpointWithoutGroupIndicesHasPlainGroups() throws Exception {
    CheckpointQuantization q = new CheckpointQuantization(Method.GPTQ, 4, 16, 1);
    PrequantizedCheckpoints.Packed<LlamaWeights> packed;
    try (LlamaWeights model = RandomLlama.create(LlamaFamilies.GQA, 41)) {
      packed = PrequantizedCheckpoints.pack(model, q, false);
    }
    PrequantizedCheckpoints.write(packed, dir, DType.F16, false);
    Map<String, Tensor> stored = new LinkedHashMap<>();
    packed.stored().tensors().forEach((name, t) -> {
      if (!name.endsWith(".g_idx")) {
        stored.put(name.equals(LlamaWeights.LM_HEAD) ? name : "model." + name, t);
      }
    });
    HfModelWriter.writeSafetensors(stored, DType.F16, dir.resolve("model.safetensors"));
    assertEquals(0.0, fp32ComputeError(packed, q, List.of()));
  }

  /**
   * The checkpoint in {@link #dir}, loaded (its quantization must be {@code q}, and its graph must
   * gather the inputs of exactly {@code gathers}' orders), against the float model its blocks
   * decode to, at fp32 compute with a float head: the worst relative logits error.
   */
  private double fp32ComputeError(PrequantizedCheckpoints.Packed<?> packed, CheckpointQuantization q,
      List<String> gathers) {
    QuantSpec exact = QuantSpec.forModel(QuantSpec.none(), q, 0, QuantSpec.HeadSetting.AUTO)
        .withHeadMode(QuantMode.NONE);
    try (ModelWeights loaded = HfModelLoader.loadWeights(dir);
        OnnxModelRunner reference = OnnxModelRunner.create(packed.dequantized(), 4, 16, 1);
        OnnxModelRunner served = OnnxModelRunner.create(loaded, 4, 16, 1, Map.of(), exact)) {
      assertEquals(q, loaded.checkpointQuantization());
      assertEquals(gathers, PrequantizedCheckpoints.actOrderGathers(loaded.graph().build(4,
          dev.radixserve.model.graph.GraphDtype.FLOAT32, exact), false));
      return OnnxModelRunnerTest.worstRelativeError(logits(served), logits(reference));
    }
  }

  @Test
  void quantizingAPrequantizedCheckpointAgainIsRefused() {
    CheckpointQuantization q = new CheckpointQuantization(Method.AWQ, 4, 128, 0);
    QuantizationException e = assertThrows(QuantizationException.class,
        () -> QuantSpec.forModel(QuantSpec.of(QuantMode.INT8), q, 4,
            QuantSpec.HeadSetting.AUTO));
    assertEquals("the checkpoint is already quantized (awq 4-bit, group 128): --quantization int8"
        + " would quantize its rounded weights again; leave --quantization at none to serve the"
        + " checkpoint's own blocks", e.getMessage());
    assertEquals(QuantSpec.of(QuantMode.INT4), QuantSpec.forModel(QuantSpec.of(QuantMode.INT4),
        null, 4, QuantSpec.HeadSetting.AUTO), "a float checkpoint keeps the configured quantization");
  }

  @Test
  void theHeadFlagsChooseHowACheckpointsFloatHeadIsServed() {
    CheckpointQuantization q = new CheckpointQuantization(Method.GPTQ, 4, 128, 1);
    QuantSpec none = QuantSpec.none();
    // groups of 128 served as blocks of 128 (QuantSpec.evenRows makes them bit-stable), the
    // auto head as beside any int4 layers: int8 in blocks of 256
    assertEquals("gptq-int4/b128/asym/acc4/head-int8-b256", QuantSpec.forModel(none, q, 4,
        QuantSpec.HeadSetting.AUTO).resolvedFor(768).key());
    assertEquals("gptq-int4/b128/asym/acc4", QuantSpec.forModel(none, q, 4,
        new QuantSpec.HeadSetting(false, null)).resolvedFor(768).key(), "kept as the checkpoint");
    assertEquals("gptq-int4/b128/asym/acc4/head", QuantSpec.forModel(none, q, 4,
        new QuantSpec.HeadSetting(true, null)).resolvedFor(768).key(), "the layers' own mode");
    assertEquals("gptq-int4/b128/asym/acc4/head-int8-b64", QuantSpec.forModel(none, q, 4,
        new QuantSpec.HeadSetting(null, 64)).resolvedFor(768).key());
    QuantizationException e = assertThrows(QuantizationException.class,
        () -> QuantSpec.forModel(none, q, 4, new QuantSpec.HeadSetting(false, 64)));
    assertEquals("quantization-head-block-size 64 is for a quantized LM head, and"
        + " quantization-lm-head false leaves it as the checkpoint has it", e.getMessage());
  }

  private static float[][] logits(OnnxModelRunner runner) {
    return runner.forward(new ForwardBatch(List.of(new ForwardBatch.Seq(PROMPT, 0, TABLE, true))));
  }
}
