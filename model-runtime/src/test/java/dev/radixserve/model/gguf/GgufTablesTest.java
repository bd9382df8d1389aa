package dev.radixserve.model.gguf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.HashSet;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The tables of this package held against gguf-py's own ({@code gguf-py-tables.json}, written by
 * {@code make_fixtures.py} from llama.cpp's gguf-py): ggml types and their blocks, metadata key
 * names (gguf-py's, and llama-arch.cpp's, which still reads {@code rope.scale_linear}), and the
 * served architectures' tensor names.
 */
class GgufTablesTest {

  static JsonNode tables() throws IOException {
    return new ObjectMapper().readTree(
        GgufTestFiles.fixtures().resolve("gguf-py-tables.json").toFile());
  }

  @Test
  void ggmlTypesAndBlocksAreGgufPys() throws IOException {
    JsonNode types = tables().get("ggml_types");
    Set<String> seen = new HashSet<>();
    types.fields().forEachRemaining(e -> {
      GgmlType t = GgmlType.ofId(e.getValue().get(0).asInt());
      if (t == null) {
        return; // a type this reader refuses as unknown by its number
      }
      seen.add(t.name());
      assertEquals(e.getKey(), t.name());
      assertEquals(e.getValue().get(1).asInt(), t.blockSize(), t.name());
      assertEquals(e.getValue().get(2).asInt(), t.typeSize(), t.name());
    });
    for (GgmlType t : GgmlType.values()) {
      assertTrue(seen.contains(t.name()), t + " is not one of gguf-py's types");
    }
  }

  @Test
  void everyKeyReadOrInertIsOneGgufPyOrLlamaCppNames() throws IOException {
    Set<String> keys = new HashSet<>();
    tables().get("keys").forEach(k -> keys.add(k.asText()));
    tables().get("llama_arch_keys").forEach(k -> keys.add(k.asText()));
    Set<String> ours = new TreeSet<>();
    GgufKeys.READ.forEach(k -> ours.add(k.replace("%s", "{arch}")));
    GgufKeys.READ_GPT2.forEach(k -> ours.add(k.replace("%s", "{arch}")));
    GgufKeys.INERT.keySet().forEach(k -> ours.add(k.replace("%s", "{arch}")));
    ours.addAll(GgufKeys.TOKENIZER_READ);
    ours.addAll(GgufKeys.TOKENIZER_INERT.keySet());
    ours.addAll(Set.of(GgufKeys.ARCHITECTURE, GgufKeys.NAME, GgufKeys.FILE_TYPE,
        GgufFile.ALIGNMENT, GgufFile.SPLIT_NO, GgufFile.SPLIT_COUNT, GgufFile.SPLIT_TENSORS));
    Set<String> unknown = new TreeSet<>(ours);
    unknown.removeAll(keys);
    assertEquals(Set.of(), unknown, "keys gguf-py does not name");
  }

  @Test
  void everyTensorNameIsOneOfTheArchitecturesInGgufPy() throws IOException {
    JsonNode names = tables().get("tensor_names");
    for (String arch : GgufKeys.ARCHITECTURES.keySet()) {
      JsonNode list = names.get(arch);
      assertNotNull(list, arch);
      Set<String> theirs = new HashSet<>();
      list.forEach(n -> theirs.add(n.asText()));
      Set<String> unknown = new TreeSet<>();
      boolean gpt2 = arch.equals("gpt2");
      (gpt2 ? GgufTensorNames.GPT2_GLOBAL : GgufTensorNames.GLOBAL).keySet()
          .forEach(n -> check(theirs, n, unknown));
      (gpt2 ? GgufTensorNames.GPT2_LAYER : arch.equals("phi3") ? GgufTensorNames.PHI3_LAYER
          : arch.startsWith("gemma") ? GgufTensorNames.GEMMA_LAYER : GgufTensorNames.LAYER).keySet()
          .forEach(n -> check(theirs, "blk.{bid}." + n, unknown));
      // q/k norms are Qwen3's; llama and qwen2 files never hold them, and biases llama.cpp takes
      // where present (its loader marks them optional)
      if (arch.equals("gemma2")) {
        unknown.remove("output"); // refused by name in a gemma2 file (GgufTensorNames)
      }
      if (!arch.equals("qwen3") && !arch.equals("gemma3")) {
        unknown.removeAll(Set.of("blk.{bid}.attn_q_norm", "blk.{bid}.attn_k_norm"));
      }
      assertEquals(Set.of(), unknown, arch + ": tensor names gguf-py does not give " + arch);
    }
    assertTrue(names.get("llama").toString().contains("rope_freqs"));
    assertTrue(names.get("phi3").toString().contains("rope_factors_long"));
    assertTrue(names.get("phi3").toString().contains("rope_factors_short"));
  }

  /** Each pre-tokenizer served is one llama.cpp's vocabulary loader names. */
  @Test
  void everyPreTokenizerIsOneLlamaCppNames() throws IOException {
    Set<String> pres = new HashSet<>();
    tables().get("llama_vocab_pres").forEach(p -> pres.add(p.asText()));
    Set<String> unknown = new TreeSet<>(GgufTokenizer.PRE.keySet());
    unknown.removeAll(pres);
    assertEquals(Set.of(), unknown, "pre-tokenizers llama.cpp does not know");
  }

  private static void check(Set<String> theirs, String name, Set<String> unknown) {
    String base = name.replaceAll("\\.(weight|bias)$", "");
    if (!theirs.contains(base)) {
      unknown.add(base);
    }
  }
}
