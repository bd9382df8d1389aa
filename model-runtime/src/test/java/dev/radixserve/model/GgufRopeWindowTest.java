package dev.radixserve.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.radixserve.model.gguf.GgufModelLoader;
import dev.radixserve.model.gguf.GgufTestFiles;
import dev.radixserve.model.quant.QuantSpec;
import dev.radixserve.model.weights.LoadedModel;
import dev.radixserve.model.weights.ModelLoadException;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * yarn rope and sliding windows in GGUF files: the transformers-written checkpoints beside
 * ({@code transformers-checkpoints/NAME}) converted by llama.cpp's own converter to BF16 ({@code
 * gguf/make_fixtures.py rope-window}), held against transformers on the checkpoint ({@code
 * NAME/expected.json}) and against llama-server on its F32 conversion ({@code NAME-f32.llama-server.json}: the same numbers).
 */
class GgufRopeWindowTest {

  private static final int[] TABLE = {5, 2, 11, 0, 7, 19, 3, 14, 9, 1, 22, 6, 17, 4, 12, 8};

  @TempDir Path tmp;

  private static JsonNode transformers(String name) throws IOException {
    return TransformersCheckpointTest.JSON.readTree(TransformersCheckpointTest.fixtures()
        .resolve(name).resolve("expected.json").toFile());
  }

  /**
   * A yarn file as the converter wrote it (type, factor, original context; llama's also the
   * betas 32 and 1): the Qwen3 file computes transformers' logprobs. (The Llama file's checkpoint
   * sets mscale 0.707 / mscale_all_dim 1, which the converter drops: that file is served as
   * llama.cpp reads it, and transformers' attention factor is not in it; see the next test.)
   */
  @Test
  void aYarnFileComputesTransformersRope() throws IOException {
    try (LoadedModel m = GgufModelLoader.load(GgufCheckpointTest.fixtures()
        .resolve("qwen3-yarn-bf16.gguf"))) {
      LlamaConfig c = (LlamaConfig) m.weights().config();
      assertEquals("yarn", c.rope().type());
      assertEquals(4.0, c.rope().factor());
      assertEquals(16, c.rope().originalMaxPositions());
      assertEquals(0.1 * Math.log(4) + 1, c.rope().attentionFactor(), 1e-12);
      GgufCheckpointTest.assertGreedySteps(m, QuantSpec.none(), transformers("qwen3-yarn"),
          "qwen3-yarn");
    }
  }

  /** The Llama yarn file: its rope as llama.cpp computes it (attention factor from the factor). */
  @Test
  void aLlamaYarnFileTakesLlamaCppsAttentionFactor() throws IOException {
    try (LoadedModel m = GgufModelLoader.load(GgufCheckpointTest.fixtures()
        .resolve("llama-yarn-bf16.gguf"))) {
      LlamaConfig.Rope rope = ((LlamaConfig) m.weights().config()).rope();
      assertEquals(new LlamaConfig.Rope("yarn", 10000, 4, 0, 0, 16, 0.1 * Math.log(4) + 1, 32, 1,
          true, List.of(), List.of(), 1), rope);
    }
  }

  /**
   * The converter writes no sliding window for qwen2 / qwen3 (nor does llama.cpp's loader read
   * one): the converted window checkpoint attends to the whole sequence, as llama-server does.
   * With {@code attention.sliding_window} and gguf-py's per-layer pattern added, the same file
   * computes transformers' windowed logprobs.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource({"qwen2-window, 6, 'false,true'", "qwen3-window, 5, 'true,false'"})
  void aWindowIsServedWhenTheFileStatesIt(String name, long window, String pattern)
      throws IOException {
    Path converted = GgufCheckpointTest.fixtures().resolve(name + "-bf16.gguf");
    try (LoadedModel m = GgufModelLoader.load(converted)) {
      assertEquals(List.of(), ((LlamaConfig) m.weights().config()).slidingWindows());
      assertLlamaServersTokens(m, name);
    }
    List<Boolean> flags = java.util.Arrays.stream(pattern.split(",")).map(Boolean::parseBoolean)
        .toList();
    String arch = name.substring(0, name.indexOf('-'));
    Path keyed = GgufTestFiles.rewrite(converted, tmp.resolve(name + ".gguf"), kv -> {
      kv.put(arch + ".attention.sliding_window", window);
      kv.put(arch + ".attention.sliding_window_pattern", flags);
    }, t -> { });
    try (LoadedModel m = GgufModelLoader.load(keyed)) {
      List<Integer> windows = flags.stream().map(f -> f ? (int) window : 0).toList();
      assertEquals(windows, ((LlamaConfig) m.weights().config()).slidingWindows());
      GgufCheckpointTest.assertGreedySteps(m, QuantSpec.none(), transformers(name),
          name + " with its window");
    }
  }

  /** Greedy tokens from each prompt equal llama-server's on the F32 conversion. */
  private static void assertLlamaServersTokens(LoadedModel m, String name) throws IOException {
    try (OnnxModelRunner runner = OnnxModelRunner.create(m.weights(), 4, 24, 1)) {
      GgufCheckpointTest.assertLlamaServersGreedy(m, runner, TABLE,
          GgufCheckpointTest.expected(name + "-f32.llama-server.json"), name);
    }
  }

  /** llama.cpp's uint pattern (every n-th layer full) and a window on every layer. */
  @Test
  void aCountPatternAndNoPatternAsLlamaCppSetsThem() throws IOException {
    Path converted = GgufCheckpointTest.fixtures().resolve("qwen2-window-bf16.gguf");
    assertEquals(List.of(6, 0), windows(converted, kv -> {
      kv.put("qwen2.attention.sliding_window", 6L);
      kv.put("qwen2.attention.sliding_window_pattern", 2L);
    }));
    assertEquals(List.of(6, 6), windows(converted,
        kv -> kv.put("qwen2.attention.sliding_window", 6L)));
  }

  /**
   * yarn keys llama.cpp's llama/qwen2/qwen3 loaders do not read are refused by name when they say
   * something else than what llama.cpp computes with.
   */
  @Test
  void yarnKeysLlamaCppIgnoresAreRefusedUnlessTheyAgree() throws IOException {
    Path file = GgufCheckpointTest.fixtures().resolve("qwen3-yarn-bf16.gguf");
    assertEquals(List.of(), windows(file, kv -> {
      kv.put("qwen3.rope.scaling.yarn_beta_fast", 32.0);
      kv.put("qwen3.rope.scaling.yarn_attn_factor", 0.1 * Math.log(4) + 1);
    }));
    for (Map.Entry<String, Object> bad : Map.<String, Object>of(
        "qwen3.rope.scaling.yarn_beta_fast", 16.0, "qwen3.rope.scaling.yarn_beta_slow", 2.0,
        "qwen3.rope.scaling.yarn_ext_factor", 0.5, "qwen3.rope.scaling.yarn_attn_factor", 0.9,
        "qwen3.rope.scaling.yarn_log_multiplier", 0.1).entrySet()) {
      ModelLoadException e = assertThrows(ModelLoadException.class, () -> windows(file,
          kv -> kv.put(bad.getKey(), bad.getValue())));
      assertTrue(e.getMessage().contains(bad.getKey()), e.getMessage());
    }
    ModelLoadException e = assertThrows(ModelLoadException.class, () -> windows(file,
        kv -> kv.put("qwen3.attention.sliding_window_pattern", 2L)));
    assertTrue(e.getMessage().contains("sliding_window_pattern without"), e.getMessage());
  }

  private List<Integer> windows(Path source, Consumer<Map<String, Object>> kv)
      throws IOException {
    Path file = GgufTestFiles.rewrite(source, tmp.resolve("edited.gguf"), kv, t -> { });
    try (LoadedModel m = GgufModelLoader.load(file)) {
      return ((LlamaConfig) m.weights().config()).slidingWindows();
    }
  }
}
