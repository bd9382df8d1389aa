package dev.radixserve.model.weights;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.radixserve.model.LlamaConfig.Rope;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Every rope type against the inverse frequencies and attention factor that transformers' own
 * rotary modules compute, at real models' sizes ({@code transformers-checkpoints/rope.json}: Llama
 * 3.1 8B's llama3, Qwen2.5's yarn, DeepSeek-style yarn with mscale, Phi-3.5's and Phi-4-mini's
 * longrope with a partial rotary, linear, dynamic, default).
 */
class RopeParametersTest {

  static final ObjectMapper JSON = new ObjectMapper();
  static final Path FILE = Path.of("config.json");

  @Test
  void inverseFrequenciesAndAttentionFactorMatchTransformers() throws Exception {
    JsonNode cases = JSON.readTree(ConfigKeysTest.fixtures().resolve("rope.json").toFile());
    int checked = 0;
    for (JsonNode c : cases.get("cases")) {
      String name = c.get("name").asText();
      int headDim = c.get("head_dim").asInt();
      Map<String, Rope> ropes = RopeParameters.read(c.get("config"), FILE, 10000, headDim);
      Rope rope = ropes.get(RopeParameters.ALL_LAYERS);
      double[] inv = rope.inverseFrequencies(headDim);
      JsonNode want = c.get("inv_freq");
      assertEquals(want.size(), inv.length, name);
      for (int i = 0; i < inv.length; i++) {
        double w = want.get(i).asDouble();
        // transformers computes in fp32 (a few ulps over a chain of ops)
        assertTrue(Math.abs(inv[i] - w) <= 1e-6 * Math.abs(w),
            name + " inv_freq[" + i + "] " + inv[i] + ", transformers " + w);
      }
      assertEquals(c.get("attention_factor").asDouble(), rope.attentionFactor(), 1e-12, name);
      checked++;
    }
    assertEquals(10, checked);
  }

  @Test
  void transformers4FormIsReadAsTheSame() {
    ObjectNode v5 = JSON.createObjectNode().put("max_position_embeddings", 4096);
    v5.putObject("rope_parameters").put("rope_type", "yarn").put("rope_theta", 1e6)
        .put("factor", 4.0).put("original_max_position_embeddings", 1024);
    ObjectNode v4 = JSON.createObjectNode().put("max_position_embeddings", 4096)
        .put("rope_theta", 1e6);
    v4.putObject("rope_scaling").put("type", "yarn").put("factor", 4.0)
        .put("original_max_position_embeddings", 1024);
    assertEquals(RopeParameters.read(v5, FILE, 10000, 64), RopeParameters.read(v4, FILE, 10000, 64));
  }

  @Test
  void perLayerTypeRopesAreReadByLayerType() {
    ObjectNode c = JSON.createObjectNode().put("max_position_embeddings", 4096);
    c.putArray("layer_types").add("sliding_attention").add("full_attention");
    ObjectNode p = c.putObject("rope_parameters");
    p.putObject("sliding_attention").put("rope_type", "default").put("rope_theta", 10000.0);
    p.putObject("full_attention").put("rope_type", "linear").put("rope_theta", 1e6)
        .put("factor", 8.0);
    Map<String, Rope> ropes = RopeParameters.read(c, FILE, 10000, 64);
    assertEquals(Rope.plain(10000), ropes.get("sliding_attention"));
    assertEquals(new Rope("linear", 1e6, 8, 0, 0, 0), ropes.get("full_attention"));
  }

  @Test
  void unknownRopeTypesAndKeysAreRefusedByName() {
    ObjectNode c = JSON.createObjectNode().put("max_position_embeddings", 4096);
    c.putObject("rope_parameters").put("rope_type", "proportional").put("rope_theta", 1e4);
    assertRefused(c, "rope_parameters rope_type proportional is not supported");
    c.putObject("rope_parameters").put("rope_type", "llama3").put("factor", 8.0)
        .put("low_freq_factor", 1.0).put("high_freq_factor", 4.0).put("mrope_section", 3);
    assertRefused(c, "rope_parameters key mrope_section 3 is not a llama3 rope parameter");
  }

  private static void assertRefused(JsonNode c, String message) {
    ModelLoadException e = assertThrows(ModelLoadException.class,
        () -> RopeParameters.read(c, FILE, 10000, 64));
    assertTrue(e.getMessage().startsWith("config.json: " + message), e.getMessage());
  }
}
