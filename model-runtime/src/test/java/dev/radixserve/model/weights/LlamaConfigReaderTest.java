package dev.radixserve.model.weights;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.radixserve.model.LlamaConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Llama-family config.json keys: Hugging Face's defaults per model_type, and every key whose
 * value the graph would not compute refused at load with the key and value named.
 */
class LlamaConfigReaderTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final LlamaConfig TINY = LlamaConfig.llama(2, 32, 4, 2, 48, 128, 260);

  @TempDir Path dir;

  @BeforeEach
  void write() {
    try (LlamaWeights w = RandomLlama.create(TINY, 5)) {
      HfModelWriter.write(w, dir, DType.F32, 1);
    }
  }

  @Test
  void writtenConfigReadsBack() {
    assertEquals(TINY, HfModelLoader.loadConfig(dir));
  }

  @Test
  void qwen2DefaultsToQkvBiasWithoutOutputBias() throws IOException {
    edit(c -> c.put("model_type", "qwen2").putArray("architectures").add("Qwen2ForCausalLM"));
    LlamaConfig c = (LlamaConfig) HfModelLoader.loadConfig(dir);
    assertTrue(c.qkvBias());
    assertEquals(false, c.oBias());
  }

  @Test
  void qwen3DefaultsToHeadDim128AndQkNorm() throws IOException {
    edit(c -> {
      c.put("model_type", "qwen3").putArray("architectures").add("Qwen3ForCausalLM");
      c.remove("head_dim");
    });
    LlamaConfig c = (LlamaConfig) HfModelLoader.loadConfig(dir);
    assertEquals(128, c.headDim());
    assertTrue(c.qkNorm());
  }

  @Test
  void unknownRopeTypeIsRefusedByName() throws IOException {
    edit(c -> c.putObject("rope_scaling").put("rope_type", "su").put("factor", 4.0));
    assertProblem("config.json", "rope_scaling rope_type su is not supported (default, linear,"
        + " dynamic, llama3, yarn, longrope)");
  }

  /** transformers 5's form: the rope is read from rope_parameters, never a silent default. */
  @Test
  void ropeParametersOfTransformers5AreRead() throws IOException {
    edit(c -> {
      c.remove("rope_theta");
      c.remove("rope_scaling");
      c.putObject("rope_parameters").put("rope_type", "llama3").put("rope_theta", 500000.0)
          .put("factor", 8.0).put("low_freq_factor", 1.0).put("high_freq_factor", 4.0)
          .put("original_max_position_embeddings", 32);
    });
    assertEquals(new LlamaConfig.Rope("llama3", 500000, 8, 1, 4, 32),
        ((LlamaConfig) HfModelLoader.loadConfig(dir)).rope());
  }

  @Test
  void mistralSlidingWindowIsEveryLayers() throws IOException {
    edit(c -> {
      c.put("model_type", "mistral").putArray("architectures").add("MistralForCausalLM");
      c.put("sliding_window", 64);
    });
    LlamaConfig c = (LlamaConfig) HfModelLoader.loadConfig(dir);
    assertEquals(java.util.Collections.nCopies(c.nLayer(), 64), c.slidingWindows());
    edit(n -> n.put("sliding_window", 128)); // as long as max_position_embeddings: never binds
    assertEquals(List.of(), ((LlamaConfig) HfModelLoader.loadConfig(dir)).slidingWindows());
  }

  /**
   * Qwen2's window counts only with use_sliding_window, and then on the layers from
   * max_window_layers on (transformers 5's derived layer_types).
   */
  @Test
  void qwenSlidingWindowCountsOnlyWhenUsed() throws IOException {
    edit(c -> {
      c.put("model_type", "qwen2").putArray("architectures").add("Qwen2ForCausalLM");
      c.put("sliding_window", 64).put("use_sliding_window", false).put("max_window_layers", 1);
    });
    assertEquals(List.of(), ((LlamaConfig) HfModelLoader.loadConfig(dir)).slidingWindows());
    edit(c -> c.put("use_sliding_window", true));
    LlamaConfig c = (LlamaConfig) HfModelLoader.loadConfig(dir);
    assertEquals(0, c.window(0));
    assertEquals(64, c.window(1));
  }

  @Test
  void mismatchedArchitectureIsRefused() throws IOException {
    edit(c -> c.putArray("architectures").add("LlamaForSequenceClassification"));
    assertProblem("config.json", "architectures LlamaForSequenceClassification is not a llama"
        + " language model (need LlamaForCausalLM)");
  }

  @Test
  void otherActivationIsRefused() throws IOException {
    edit(c -> c.put("hidden_act", "gelu"));
    assertProblem("config.json", "hidden_act gelu is not supported (silu)");
  }

  @Test
  void aQuantizationOtherThanGptqOrAwqIsRefusedByMethod() throws IOException {
    edit(c -> c.putObject("quantization_config").put("quant_method", "bitsandbytes")
        .put("load_in_4bit", true));
    assertProblem("config.json", "quantization_config quant_method bitsandbytes is not"
        + " supported: radixserve loads GPTQ and AWQ (GEMM) checkpoints");
  }

  @Test
  void aGptqConfigOverFloatWeightsNamesTheMissingPackedTensor() throws IOException {
    edit(c -> c.putObject("quantization_config").put("quant_method", "gptq").put("bits", 4)
        .put("group_size", 16));
    assertProblem("model.safetensors", "missing tensor layers.0.self_attn.q_proj.qweight");
  }

  @Test
  void missingTensorIsNamed() throws IOException {
    try (LlamaWeights w = RandomLlama.create(TINY, 5)) {
      var tensors = new java.util.LinkedHashMap<String, Tensor>();
      w.tensors().forEach((name, t) -> {
        if (!name.equals("layers.1.mlp.up_proj.weight")) {
          tensors.put("model." + name, t);
        }
      });
      HfModelWriter.writeSafetensors(tensors, DType.F32, dir.resolve("model.safetensors"));
    }
    assertProblem("model.safetensors", "missing tensor layers.1.mlp.up_proj.weight");
  }

  private void edit(Consumer<ObjectNode> change) throws IOException {
    Path file = dir.resolve("config.json");
    ObjectNode c = (ObjectNode) JSON.readTree(Files.readString(file));
    change.accept(c);
    Files.writeString(file, JSON.writeValueAsString(c));
  }

  private void assertProblem(String file, String problem) {
    ModelLoadException e = assertThrows(ModelLoadException.class, () -> HfModelLoader.loadWeights(dir));
    assertEquals(dir.resolve(file), e.file());
    assertTrue(e.getMessage().startsWith(file + ": " + problem), e.getMessage());
  }
}
