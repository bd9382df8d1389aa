package dev.radixserve.model.gguf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.model.weights.ModelLoadException;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a file says that radixserve would compute otherwise than llama.cpp is refused by name:
 * keys, tensor types, architectures, tokenizers, rope scalings, mixed block types. Each case is a
 * fixture the converter wrote with one thing changed ({@link GgufTestFiles#rewrite}).
 */
class GgufRefusalTest {

  @TempDir Path tmp;

  private void assertRefused(String fixture, Consumer<Map<String, Object>> kv,
      Consumer<List<GgufTestFiles.Entry>> tensors, String... phrases) throws IOException {
    Path file = GgufTestFiles.rewrite(fixture, tmp.resolve("model.gguf"), kv, tensors);
    ModelLoadException e = assertThrows(ModelLoadException.class,
        () -> GgufModelLoader.load(file).close());
    for (String p : phrases) {
      assertTrue(e.getMessage().contains(p), e.getMessage());
    }
  }

  @Test
  void theRewrittenFixtureItselfLoads() throws IOException {
    Path file = GgufTestFiles.rewrite("llama3-q8_0.gguf", tmp.resolve("same.gguf"), kv -> { },
        t -> { });
    GgufModelLoader.load(file).close();
  }

  @Test
  void anUnknownKeyOfTheArchitectureIsRefusedByName() throws IOException {
    assertRefused("llama3-f32.gguf", kv -> kv.put("llama.expert_count", 8L), t -> { },
        "llama.expert_count = 8", "would change what llama.cpp computes");
    assertRefused("qwen2-f32.gguf", kv -> kv.put("qwen2.rope.scaling.attn_factor", 0.5),
        t -> { }, "qwen2.rope.scaling.attn_factor = 0.5");
    assertRefused("qwen2-f32.gguf", kv -> kv.put("tokenizer.ggml.remove_extra_whitespaces", true),
        t -> { }, "tokenizer.ggml.remove_extra_whitespaces");
  }

  @Test
  void anUnservedTensorTypeIsRefusedWithItsNameAndType() throws IOException {
    assertRefused("llama3-f32.gguf", kv -> { }, t -> t.replaceAll(e ->
        e.name().equals("blk.0.ffn_down.weight")
            ? new GgufTestFiles.Entry(e.name(), new long[] {256, 64}, GgmlType.IQ2_XXS,
                new byte[64 * 66]) : e),
        "tensor blk.0.ffn_down.weight is IQ2_XXS", "Q8_0");
  }

  /**
   * Projections in more than one block type (llama-quantize's mixes) stay in the file's blocks,
   * read as the file's weights dequantized a row at a time (no float copy made at load), and are
   * requantized to the mode of most of them (here Q8_0's: int8).
   */
  @Test
  void projectionsMixingBlockTypesAreDecodedFromTheFileAndRequantized() throws IOException {
    List<GgufTestFiles.Entry> q4 = new java.util.ArrayList<>();
    GgufTestFiles.rewrite("llama3-q4_0.gguf", tmp.resolve("q4.gguf"), kv -> { }, q4::addAll);
    Path mixed = GgufTestFiles.rewrite("llama3-q8_0.gguf", tmp.resolve("mixed.gguf"), kv -> { },
        t -> t.replaceAll(e -> e.name().equals("blk.1.ffn_up.weight")
            ? q4.stream().filter(x -> x.name().equals(e.name())).findFirst().orElseThrow() : e));
    try (var m = GgufModelLoader.load(mixed);
        java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
      assertNull(m.weights().checkpointQuantization());
      GgufFile f = GgufFile.map(mixed, arena);
      for (String[] pair : new String[][] {{"blk.1.ffn_up.weight", "layers.1.mlp.up_proj.weight"},
          {"blk.0.ffn_gate.weight", "layers.0.mlp.gate_proj.weight"}}) {
        GgufFile.TensorInfo t = f.tensors().stream().filter(x -> x.name().equals(pair[0]))
            .findFirst().orElseThrow();
        dev.radixserve.model.weights.Tensor w = m.weights().tensor(pair[1]);
        assertEquals(dev.radixserve.model.weights.DType.F32, w.dtype());
        assertNotNull(w.decoder(), pair[1] + " is decoded on read");
        assertEquals(t.data().byteSize(), w.data().byteSize(), "the file's own bytes");
        float[] row = new float[(int) t.ne()[0]];
        for (int r = 0; r < t.ne()[1]; r++) {
          GgufBlocks.dequantizeRow(t, r, row);
          for (int k = 0; k < row.length; k++) {
            assertEquals(row[k], w.get((long) r * row.length + k), 0.0f, pair[0]);
          }
        }
      }
      assertTrue(m.weights().describe().contains("tensors F32 ×6, Q4_0 ×1, Q8_0 ×14"),
          m.weights().describe());
      assertTrue(m.weights().describe().contains("projections Q4_0 ×1 requantized to int8,"
          + " Q8_0 ×13 requantized to int8"),
          m.weights().describe());
      assertEquals(dev.radixserve.model.quant.QuantMode.INT8, m.weights().requantizeAs());
    }
  }

  @Test
  void anotherArchitectureTokenizerOrRopeScalingIsRefused() throws IOException {
    assertRefused("qwen2-f32.gguf", kv -> kv.put(GgufKeys.ARCHITECTURE, "phi2"), t -> { },
        "general.architecture phi2 is not served");
    assertRefused("qwen2-f32.gguf", kv -> kv.put(GgufKeys.TOKENIZER_MODEL, "bert"), t -> { },
        "tokenizer.ggml.model bert is not served");
    assertRefused("qwen2-f32.gguf", kv -> kv.put(GgufKeys.TOKENIZER_PRE, "falcon"), t -> { },
        "tokenizer.ggml.pre falcon is not served");
    assertRefused("qwen2-f32.gguf", kv -> {
      kv.put("qwen2.rope.scaling.type", "longrope");
      kv.put("qwen2.rope.scaling.factor", 4.0);
    }, t -> { }, "qwen2.rope.scaling.type longrope is not served");
  }
}
