package dev.radixserve.model.weights;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.radixserve.model.GemmaConfig;
import dev.radixserve.model.GemmaConfig.LayerType;
import dev.radixserve.model.LlamaConfig;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Gemma config.json keys against transformers' Gemma2Config / Gemma3TextConfig: the fixtures'
 * configs (written by transformers 5.18, and gemma3's in transformers 4's form) read as what
 * transformers builds from them, its defaults for absent keys, and every key the graph would not
 * compute refused by name and value.
 */
class GemmaConfigReaderTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;

  /**
   * Each key the table calls inert, changed in the transformers-written configs, reads the same
   * config (ConfigKeysTest holds the table itself against transformers' classes).
   */
  @Test
  void inertKeysChangeNothingRead() throws IOException {
    for (String fixture : List.of("gemma2", "gemma3")) {
      GemmaConfig base = read(fixture, "config.json", x -> {});
      String type = base.modelType();
      for (String key : GemmaConfigReader.KEYS.get(type).inert().keySet()) {
        GemmaConfig changed = read(fixture, "config.json", c -> c.put(key, 12345));
        assertEquals(base, changed, fixture + ": inert " + key);
      }
    }
  }

  @Test
  void gemma2FixtureReadsAsTransformersBuiltIt() throws IOException {
    GemmaConfig c = read("gemma2", "config.json", x -> {});
    assertEquals(List.of(LayerType.SLIDING_ATTENTION, LayerType.FULL_ATTENTION), c.layerTypes());
    assertEquals(8, c.window(0));
    assertEquals(0, c.window(1));
    assertEquals(3.0, c.attnSoftcap());
    assertEquals(10.0, c.finalSoftcap());
    assertEquals((float) Math.pow(24, -0.5), c.attentionScale());
    assertEquals(LlamaConfig.Rope.plain(10000), c.rope(0));
    assertEquals(LlamaConfig.Rope.plain(10000), c.rope(1));
    assertEquals(false, c.qkNorm());
    assertTrue(c.tieWordEmbeddings());
  }

  @Test
  void gemma3FixtureHasARopePerLayerTypeAndTheTransformers4FormReadsTheSame() throws IOException {
    GemmaConfig c = read("gemma3", "config.json", x -> {});
    assertEquals(List.of(LayerType.SLIDING_ATTENTION, LayerType.SLIDING_ATTENTION,
        LayerType.FULL_ATTENTION), c.layerTypes());
    assertEquals(LlamaConfig.Rope.plain(10000), c.rope(0));
    assertEquals(new LlamaConfig.Rope("linear", 1_000_000, 2, 0, 0, 0), c.rope(2));
    assertTrue(c.qkNorm());
    assertEquals(0.0, c.attnSoftcap());
    assertEquals(0.0, c.finalSoftcap());
    assertEquals(c, read("gemma3", "config.transformers4.json", x -> {}));
  }

  /** Gemma2Config's defaults: soft-caps 50 / 30 when absent, none when null. */
  @Test
  void gemma2SoftcapsDefaultWhenAbsentAndAreOffWhenNull() throws IOException {
    GemmaConfig absent = read("gemma2", "config.json", c -> {
      c.remove("attn_logit_softcapping");
      c.remove("final_logit_softcapping");
      c.remove("layer_types");
    });
    assertEquals(50.0, absent.attnSoftcap());
    assertEquals(30.0, absent.finalSoftcap());
    assertEquals(List.of(LayerType.SLIDING_ATTENTION, LayerType.FULL_ATTENTION),
        absent.layerTypes());
    GemmaConfig off = read("gemma2", "config.json", c -> {
      c.putNull("attn_logit_softcapping");
      c.putNull("final_logit_softcapping");
    });
    assertEquals(0.0, off.attnSoftcap());
    assertEquals(0.0, off.finalSoftcap());
  }

  /** Without layer_types, Gemma 3 makes every sliding_window_pattern-th layer full (default 6). */
  @Test
  void gemma3LayerTypesFollowTheSlidingWindowPattern() throws IOException {
    GemmaConfig c = read("gemma3", "config.json", x -> {
      x.remove("layer_types");
      x.put("num_hidden_layers", 7);
    });
    for (int i = 0; i < 7; i++) {
      assertEquals(i == 5 ? LayerType.FULL_ATTENTION : LayerType.SLIDING_ATTENTION,
          c.layerType(i), "layer " + i);
    }
  }

  @Test
  void multimodalGemma3IsRefusedByName() throws IOException {
    assertRefused("gemma3", c -> c.put("model_type", "gemma3"), "gemma3_text");
  }

  @Test
  void whatTheGraphDoesNotComputeIsRefusedByNameAndValue() throws IOException {
    assertRefused("gemma3", c -> c.put("use_bidirectional_attention", true),
        "use_bidirectional_attention true");
    assertRefused("gemma3", c -> ((ObjectNode) c.get("rope_parameters").get("full_attention"))
        .put("rope_type", "mrope"), "rope_type mrope");
    assertRefused("gemma3", c -> c.put("attn_logit_softcapping", 50.0),
        "attn_logit_softcapping 50.0");
    assertRefused("gemma2", c -> c.put("hidden_activation", "gelu"), "hidden_activation \"gelu\"");
    assertRefused("gemma2", c -> c.putArray("layer_types").add("chunked_attention")
        .add("full_attention"), "chunked_attention");
    assertRefused("gemma2", c -> c.putObject("quantization_config").put("quant_method", "gptq"),
        "quantization_config gptq");
    assertRefused("gemma2", c -> c.put("partial_rotary_factor", 0.5), "partial_rotary_factor 0.5");
    assertRefused("gemma3", c -> c.put("dtype", "int8"), "dtype \"int8\"");
    assertRefused("gemma2", c -> c.putArray("architectures").add("Gemma2ForSequenceClassification"),
        "Gemma2ForSequenceClassification");
  }

  private void assertRefused(String fixture, Consumer<ObjectNode> edit, String named)
      throws IOException {
    ModelLoadException e = assertThrows(ModelLoadException.class,
        () -> read(fixture, "config.json", edit));
    assertTrue(e.getMessage().contains(named), e.getMessage());
  }

  private GemmaConfig read(String fixture, String file, Consumer<ObjectNode> edit)
      throws IOException {
    ObjectNode c = (ObjectNode) JSON.readTree(resource(fixture).resolve(file).toFile());
    edit.accept(c);
    Files.writeString(dir.resolve(HfModelLoader.CONFIG_JSON), c.toString());
    return (GemmaConfig) HfModelLoader.loadConfig(dir);
  }

  private static Path resource(String name) {
    try {
      return Path.of(GemmaConfigReaderTest.class.getResource("/gemma/" + name).toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }
}
