package dev.radixserve.model.gguf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.model.LlamaConfig;
import dev.radixserve.model.weights.LoadedModel;
import dev.radixserve.model.weights.ModelLoadException;
import dev.radixserve.model.weights.Tensor;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Phi-3 files as llama.cpp's converter writes them ({@code gguf/make_fixtures.py phi3}: fused
 * {@code attn_qkv} and {@code ffn_up}, longrope as {@code rope_factors_short/long.weight} and
 * {@code rope.scaling.attn_factor}, the window as {@code attention.sliding_window}, 0 for none)
 * read into the Llama graph's config and tensors. What the files compute is held against
 * transformers and llama-server in {@code GgufCheckpointTest}.
 */
class GgufPhi3Test {

  @TempDir Path tmp;

  private static LoadedModel load(String file) {
    return GgufModelLoader.load(GgufTestFiles.fixtures().resolve(file));
  }

  /** The checkpoint's longrope (make_fixtures.PHI3["phi3"]) from the file's tensors and keys. */
  @Test
  void longropeComesFromTheFactorTensors() {
    try (LoadedModel m = load("phi3-f32.gguf")) {
      LlamaConfig c = (LlamaConfig) m.weights().config();
      assertEquals("phi3", c.modelType());
      LlamaConfig.Rope rope = c.rope();
      assertEquals("longrope", rope.type());
      assertEquals(256, rope.originalMaxPositions());
      assertEquals(256, c.longContextFrom());
      assertEquals(1.0, rope.partialRotaryFactor());
      for (int i = 0; i < 8; i++) {
        assertEquals(1.0 + 0.05 * i, rope.shortFactor().get(i), 1e-6);
        assertEquals(1.0 + 0.9 * i, rope.longFactor().get(i), 1e-6);
      }
      // transformers' longrope attention factor for 512 / 256, as the converter computed it
      assertEquals(Math.sqrt(1 + Math.log(2) / Math.log(256)), rope.attentionFactor(), 1e-6);
      assertEquals(List.of(), c.slidingWindows(), "sliding_window 0: none");
      assertFalse(c.tieWordEmbeddings());
    }
  }

  /** Phi-4-mini's shape: longrope over 3/4 of each head, tied. */
  @Test
  void aPartialRotaryFromTheRopeDimensionCount() {
    try (LoadedModel m = load("phi3-long-f32.gguf")) {
      LlamaConfig c = (LlamaConfig) m.weights().config();
      assertEquals(0.75, c.rope().partialRotaryFactor());
      assertEquals(12, c.rope().rotaryDim(c.headDim()));
      assertEquals(6, c.rope().longFactor().size());
      assertEquals(8, c.longContextFrom());
      assertTrue(c.tieWordEmbeddings());
    }
  }

  @Test
  void aWindowOnEveryLayerAndNoRopeLists() {
    try (LoadedModel m = load("phi3-window-f32.gguf")) {
      LlamaConfig c = (LlamaConfig) m.weights().config();
      assertEquals(List.of(6, 6), c.slidingWindows());
      assertEquals("default", c.rope().type());
      assertEquals(Integer.MAX_VALUE, c.longContextFrom());
    }
  }

  /**
   * {@code attn_qkv}'s rows are q's, k's, v's and {@code ffn_up}'s gate's then up's: each part is
   * the file's rows in place, whatever the type (the Q8_0 file's parts are its own blocks).
   */
  @Test
  void theFusedProjectionsAreSplitIntoTheFilesOwnRows() {
    for (String file : new String[] {"phi3-f32.gguf", "phi3-q8_0.gguf"}) {
      try (LoadedModel m = load(file)) {
        Map<String, Tensor> t = m.weights().tensors();
        assertArrayEquals(new long[] {64, 64}, t.get("layers.1.self_attn.q_proj.weight").shape());
        assertArrayEquals(new long[] {32, 64}, t.get("layers.1.self_attn.k_proj.weight").shape());
        assertArrayEquals(new long[] {32, 64}, t.get("layers.1.self_attn.v_proj.weight").shape());
        assertArrayEquals(new long[] {128, 64}, t.get("layers.1.mlp.gate_proj.weight").shape());
        assertArrayEquals(new long[] {128, 64}, t.get("layers.1.mlp.up_proj.weight").shape());
        assertFalse(t.containsKey("layers.1.self_attn.qkv_proj.weight"));
        assertFalse(t.containsKey("layers.1.mlp.gate_up_proj.weight"));
      }
    }
    try (LoadedModel f32 = load("phi3-f32.gguf")) {
      // v's first row is the fused tensor's row 64 + 32
      float[] v = new float[64];
      float[] fused = new float[64];
      f32.weights().tensor("layers.0.self_attn.v_proj.weight").readRow(0, v);
      try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
        GgufFile f = GgufFile.map(GgufTestFiles.fixtures().resolve("phi3-f32.gguf"), arena);
        GgufFile.TensorInfo qkv = f.tensors().stream()
            .filter(x -> x.name().equals("blk.0.attn_qkv.weight")).findFirst().orElseThrow();
        GgufBlocks.dequantizeRow(qkv, 96, fused);
      }
      assertArrayEquals(fused, v);
    }
  }

  @Test
  void oneFactorListOrOtherRopeScalingIsRefusedByName() throws IOException {
    ModelLoadException e = assertThrows(ModelLoadException.class, () -> edited(kv -> { },
        t -> t.removeIf(x -> x.name().equals("rope_factors_short.weight"))));
    assertTrue(e.getMessage().contains("rope_factors_long.weight without"
        + " rope_factors_short.weight"), e.getMessage());
    e = assertThrows(ModelLoadException.class, () -> edited(kv -> {
      kv.put("phi3.rope.scaling.type", "linear");
      kv.put("phi3.rope.scaling.factor", 2.0);
    }, t -> { }));
    assertTrue(e.getMessage().contains("phi3.rope.scaling.type linear"), e.getMessage());
    e = assertThrows(ModelLoadException.class, () -> edited(
        kv -> kv.put("phi3.rope.dimension_count", 7L), t -> { }));
    assertTrue(e.getMessage().contains("phi3.rope.dimension_count 7"), e.getMessage());
    // a key of another architecture's loader stays refused for phi3
    e = assertThrows(ModelLoadException.class, () -> edited(
        kv -> kv.put("phi3.attn_logit_softcapping", 50.0), t -> { }));
    assertTrue(e.getMessage().contains("phi3.attn_logit_softcapping"), e.getMessage());
  }

  /** A fused tensor beside one of its parts, or of the wrong height, is refused by name. */
  @Test
  void aFusedTensorThatDoesNotSplitIsRefused() {
    ModelLoadException e = assertThrows(ModelLoadException.class, () -> edited(kv -> { }, t -> {
      GgufTestFiles.Entry o = entry(t, "blk.0.attn_output.weight");
      t.add(new GgufTestFiles.Entry("blk.0.attn_q.weight", o.ne(), o.type(), o.data()));
    }));
    assertTrue(e.getMessage().contains("blk.0.attn_qkv.weight and a separate"
        + " layers.0.self_attn.q_proj.weight both given"), e.getMessage());
    e = assertThrows(ModelLoadException.class, () -> edited(kv -> { }, t -> {
      GgufTestFiles.Entry o = entry(t, "blk.1.attn_output.weight");
      t.removeIf(x -> x.name().equals("blk.1.attn_qkv.weight"));
      t.add(new GgufTestFiles.Entry("blk.1.attn_qkv.weight", o.ne(), o.type(), o.data()));
    }));
    assertTrue(e.getMessage().contains("tensor blk.1.attn_qkv.weight has ne [64, 64], expected"
        + " [64, 128]"), e.getMessage());
  }

  private static GgufTestFiles.Entry entry(List<GgufTestFiles.Entry> t, String name) {
    return t.stream().filter(x -> x.name().equals(name)).findFirst().orElseThrow();
  }

  private void edited(Consumer<Map<String, Object>> kv, Consumer<List<GgufTestFiles.Entry>> t)
      throws IOException {
    Path file = GgufTestFiles.rewrite("phi3-f32.gguf", tmp.resolve("edited.gguf"), kv, t);
    GgufModelLoader.load(file).close();
  }
}
