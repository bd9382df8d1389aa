package dev.radixserve.model.gguf;

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
    assertRefused("qwen2-f32.gguf", kv -> kv.put("qwen2.attention.sliding_window", 4L), t -> { },
        "qwen2.attention.sliding_window = 4");
    assertRefused("qwen2-f32.gguf", kv -> kv.put("tokenizer.ggml.remove_extra_whitespaces", true),
        t -> { }, "tokenizer.ggml.remove_extra_whitespaces");
  }

  @Test
  void aKQuantTensorIsRefusedWithItsNameAndType() throws IOException {
    assertRefused("llama3-f32.gguf", kv -> { }, t -> t.replaceAll(e ->
        e.name().equals("blk.0.ffn_down.weight")
            ? new GgufTestFiles.Entry(e.name(), new long[] {256, 64}, GgmlType.Q4_K,
                new byte[64 * 144]) : e),
        "tensor blk.0.ffn_down.weight is Q4_K", "Q8_0");
  }

  @Test
  void projectionsMixingBlockTypesAreRefused() throws IOException {
    List<GgufTestFiles.Entry> q4 = new java.util.ArrayList<>();
    GgufTestFiles.rewrite("llama3-q4_0.gguf", tmp.resolve("q4.gguf"), kv -> { }, q4::addAll);
    assertRefused("llama3-q8_0.gguf", kv -> { }, t -> t.replaceAll(e ->
        e.name().equals("blk.1.ffn_up.weight")
            ? q4.stream().filter(x -> x.name().equals(e.name())).findFirst().orElseThrow() : e),
        "projections mix [Q4_0, Q8_0]", "Q4_0: 1 (blk.1.ffn_up.weight)");
  }

  @Test
  void anotherArchitectureTokenizerOrRopeScalingIsRefused() throws IOException {
    assertRefused("qwen2-f32.gguf", kv -> kv.put(GgufKeys.ARCHITECTURE, "phi3"), t -> { },
        "general.architecture phi3 is not served");
    assertRefused("qwen2-f32.gguf", kv -> kv.put(GgufKeys.TOKENIZER_MODEL, "llama"), t -> { },
        "tokenizer.ggml.model llama is not served");
    assertRefused("qwen2-f32.gguf", kv -> kv.put(GgufKeys.TOKENIZER_PRE, "falcon"), t -> { },
        "tokenizer.ggml.pre falcon is not served");
    assertRefused("qwen2-f32.gguf", kv -> {
      kv.put("qwen2.rope.scaling.type", "yarn");
      kv.put("qwen2.rope.scaling.factor", 4.0);
    }, t -> { }, "qwen2.rope.scaling.type yarn is not served");
  }
}
