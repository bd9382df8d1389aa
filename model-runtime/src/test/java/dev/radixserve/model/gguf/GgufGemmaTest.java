package dev.radixserve.model.gguf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.model.GemmaConfig;
import dev.radixserve.model.GemmaConfig.LayerType;
import dev.radixserve.model.LlamaConfig;
import dev.radixserve.model.weights.LoadedModel;
import dev.radixserve.model.weights.ModelLoadException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Gemma 2 and Gemma 3 files as llama.cpp's converter writes them ({@code gguf/make_fixtures.py
 * gemma}) read into the Gemma graph's config, with what llama.cpp's loaders fix where the file
 * says nothing. What the files compute is held against transformers and llama-server in {@code
 * GgufCheckpointTest} and {@code GgufQ8HeadTest}.
 */
class GgufGemmaTest {

  private static final LayerType S = LayerType.SLIDING_ATTENTION;
  private static final LayerType F = LayerType.FULL_ATTENTION;

  @TempDir Path tmp;

  @Test
  void gemma2AsTheFileStatesIt() {
    GemmaConfig c = config("gemma2-f32.gguf", kv -> { });
    assertEquals("gemma2", c.modelType());
    assertEquals(16, c.queryPreAttnScalar(), "1/sqrt(head_dim), llama.cpp's scale");
    assertEquals(3.0, c.attnSoftcap());
    assertEquals(10.0, c.finalSoftcap());
    assertEquals(8, c.slidingWindow());
    assertEquals(List.of(S, F), c.layerTypes());
    assertEquals(LlamaConfig.Rope.plain(10000), c.rope(0));
    assertEquals(LlamaConfig.Rope.plain(10000), c.rope(1));
    assertTrue(c.tieWordEmbeddings());
  }

  /** What llama.cpp's gemma2 loader takes without the keys: caps 50 / 30, a window of 4096. */
  @Test
  void gemma2WithoutItsKeysTakesLlamaCppsDefaults() {
    GemmaConfig c = config("gemma2-f32.gguf", kv -> {
      kv.remove("gemma2.attn_logit_softcapping");
      kv.remove("gemma2.final_logit_softcapping");
      kv.remove("gemma2.attention.sliding_window");
    });
    assertEquals(50.0, c.attnSoftcap());
    assertEquals(30.0, c.finalSoftcap());
    assertEquals(4096, c.slidingWindow());
    assertEquals(List.of(S, F), c.layerTypes());
    assertEquals(List.of(S, S), config("gemma2-f32.gguf",
        kv -> kv.put("gemma2.attention.sliding_window_pattern", 0L)).layerTypes());
  }

  @Test
  void gemma3SlidingLayersRotateAtTheirOwnBaseUnscaled() {
    GemmaConfig c = config("gemma3-f32.gguf", kv -> { });
    assertEquals("gemma3_text", c.modelType());
    assertEquals(0.0, c.attnSoftcap());
    assertEquals(0.0, c.finalSoftcap());
    assertEquals(List.of(S, S, S, S, S, F), c.layerTypes(), "five in six, llama.cpp's default");
    assertEquals(6, c.slidingWindow());
    assertEquals(new LlamaConfig.Rope("linear", 1000000, 2, 0, 0, 0), c.rope(5));
    assertEquals(LlamaConfig.Rope.plain(10000), c.rope(0));
    assertTrue(c.qkNorm());
    GemmaConfig noBase = config("gemma3-f32.gguf", kv -> kv.remove("gemma3.rope.freq_base_swa"));
    assertEquals(LlamaConfig.Rope.plain(10000), noBase.rope(0), "llama.cpp's default base");
    GemmaConfig noWindow = config("gemma3-f32.gguf",
        kv -> kv.remove("gemma3.attention.sliding_window"));
    assertEquals(Collections.nCopies(6, F), noWindow.layerTypes());
    assertEquals(Collections.nCopies(6, F), config("gemma3-f32.gguf",
        kv -> kv.put("gemma3.attention.sliding_window", 0L)).layerTypes(), "llama.cpp's n_swa 0");
  }

  /** llama.cpp's LLM_TYPE_27B (46 / 62 layers) scales scores by hidden / heads. */
  @Test
  void the27bLayerCountsScaleByHiddenOverHeads() throws IOException {
    assertEquals(16.0, readConfig("gemma2-f32.gguf", "gemma2",
        kv -> kv.put("gemma2.block_count", 46L)).queryPreAttnScalar());
    assertEquals(16.0, readConfig("gemma3-f32.gguf", "gemma3",
        kv -> kv.put("gemma3.block_count", 62L)).queryPreAttnScalar());
    assertEquals(16.0, readConfig("gemma3-f32.gguf", "gemma3",
        kv -> {
          kv.put("gemma3.block_count", 62L);
          kv.put("gemma3.attention.key_length", 32L);
          kv.put("gemma3.attention.value_length", 32L);
        }).queryPreAttnScalar(), "hidden 64 / 4 heads, not the head of 32");
    assertEquals(32.0, readConfig("gemma3-f32.gguf", "gemma3",
        kv -> {
          kv.put("gemma3.attention.key_length", 32L);
          kv.put("gemma3.attention.value_length", 32L);
        }).queryPreAttnScalar());
  }

  /** The converter stored 1 + w; the graph's (1 + w) norm gets w back, so it scales by the file's. */
  @Test
  void normsAreTheConvertersValuesLessOne() {
    try (LoadedModel m = load("gemma3-f32.gguf"); Arena arena = Arena.ofConfined()) {
      GgufFile f = GgufFile.map(GgufTestFiles.fixtures().resolve("gemma3-f32.gguf"), arena);
      for (String[] pair : new String[][] {{"blk.2.attn_norm.weight", "layers.2.input_layernorm"
          + ".weight"}, {"blk.0.post_ffw_norm.weight", "layers.0.post_feedforward_layernorm"
          + ".weight"}, {"blk.5.attn_q_norm.weight", "layers.5.self_attn.q_norm.weight"},
          {"output_norm.weight", "norm.weight"}}) {
        GgufFile.TensorInfo t = f.tensors().stream().filter(x -> x.name().equals(pair[0]))
            .findFirst().orElseThrow();
        float[] file = new float[(int) t.ne()[0]];
        GgufBlocks.dequantizeRow(t, 0, file);
        float[] served = m.weights().tensor(pair[1]).toFloatArray();
        for (int i = 0; i < file.length; i++) {
          assertEquals(file[i], 1 + served[i], 0f, pair[0] + "[" + i + "]");
        }
      }
    }
  }

  @Test
  void keysOtherGemmaLoadersDoNotReadAreRefused() {
    ModelLoadException e = assertThrows(ModelLoadException.class, () -> config("gemma3-f32.gguf",
        kv -> kv.put("gemma3.attn_logit_softcapping", 50.0)));
    assertTrue(e.getMessage().contains("gemma3.attn_logit_softcapping"), e.getMessage());
    e = assertThrows(ModelLoadException.class, () -> config("gemma2-f32.gguf",
        kv -> kv.put("gemma2.rope.scaling.type", "yarn")));
    assertTrue(e.getMessage().contains("gemma2.rope.scaling.type yarn"), e.getMessage());
    // llama.cpp's gemma2 ties its head to token_embd, whatever the file holds
    e = assertThrows(ModelLoadException.class, () -> GgufModelLoader.load(GgufTestFiles.rewrite(
        "gemma2-f32.gguf", tmp.resolve("untied.gguf"), kv -> { }, t -> {
          GgufTestFiles.Entry embed = t.stream().filter(x -> x.name().equals("token_embd.weight"))
              .findFirst().orElseThrow();
          t.add(new GgufTestFiles.Entry("output.weight", embed.ne(), embed.type(), embed.data()));
        })).close());
    assertTrue(e.getMessage().contains("tensor output.weight is not one of the gemma2 tensors"),
        e.getMessage());
  }

  private static LoadedModel load(String file) {
    return GgufModelLoader.load(GgufTestFiles.fixtures().resolve(file));
  }

  private GemmaConfig config(String fixture, Consumer<Map<String, Object>> kv) {
    try (LoadedModel m = GgufModelLoader.load(edited(fixture, kv))) {
      return (GemmaConfig) m.weights().config();
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** The config alone (the layer count may then disagree with the tensors). */
  private GemmaConfig readConfig(String fixture, String arch, Consumer<Map<String, Object>> kv)
      throws IOException {
    try (Arena arena = Arena.ofConfined()) {
      GgufFile f = GgufFile.map(edited(fixture, kv), arena);
      return GgufGemmaConfig.read(f, arch, GgufTensorNames.canonical(f, arch));
    }
  }

  private Path edited(String fixture, Consumer<Map<String, Object>> kv) throws IOException {
    return GgufTestFiles.rewrite(fixture, tmp.resolve("edited-" + System.nanoTime() + ".gguf"),
        kv, t -> { });
  }
}
