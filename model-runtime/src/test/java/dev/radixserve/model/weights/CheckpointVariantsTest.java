package dev.radixserve.model.weights;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.model.ModelConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Checkpoints as people publish them, written with {@link HfModelWriter} and read back: untied
 * heads, {@code n_inner}, shards, EOS ids, tokenizers that do or do not fit {@code vocab_size},
 * and the config keys that are refused by name.
 */
class CheckpointVariantsTest {

  /** Byte-level tokenizer (257 ids) with a model vocabulary padded to 260. */
  static final ModelConfig SMALL = new ModelConfig(2, 2, 8, 16, 260, 1e-5, "gelu_new");

  @TempDir Path dir;

  @Test
  void untiedHeadLoadsAsItsOwnTensorInF32AndBf16() {
    ModelConfig untied = SMALL.withUntiedHead();
    try (GptWeights w = RandomGpt2.create(untied, 3)) {
      for (DType dtype : List.of(DType.F32, DType.BF16)) {
        Path d = dir.resolve(dtype.name());
        HfModelWriter.write(w, d, dtype, "transformer.");
        try (GptWeights loaded = (GptWeights) HfModelLoader.loadWeights(d)) {
          assertEquals(untied, loaded.config());
          Tensor head = loaded.tensor("lm_head.weight");
          assertEquals(dtype, head.dtype());
          assertArrayEquals(new long[] {260, 8}, head.shape());
          float[] expected = w.tensor("lm_head.weight").toFloatArray();
          float[] actual = head.toFloatArray();
          for (int i = 0; i < expected.length; i++) {
            float want = dtype == DType.F32 ? expected[i]
                : Float.intBitsToFloat((HfModelWriter.toBf16(expected[i]) & 0xffff) << 16);
            assertEquals(want, actual[i], "lm_head[" + i + "]");
          }
        }
      }
    }
  }

  @Test
  void untiedConfigWithoutLmHeadIsRefused() throws IOException {
    try (GptWeights w = RandomGpt2.create(SMALL, 3)) {
      HfModelWriter.write(w, dir, DType.F32);
    }
    setConfigKey("\"n_inner\"", "\"tie_word_embeddings\" : false,\n  \"n_inner\"");
    assertProblem("model.safetensors", "has no lm_head.weight, and config.json sets tie_word_embeddings false");
  }

  @Test
  void nInnerSetsTheMlpWidth() throws IOException {
    ModelConfig narrow = SMALL.withNInner(20);
    try (GptWeights w = RandomGpt2.create(narrow, 4)) {
      HfModelWriter.write(w, dir, DType.F32);
    }
    assertTrue(Files.readString(dir.resolve("config.json")).contains("\"n_inner\" : 20"));
    try (GptWeights loaded = (GptWeights) HfModelLoader.loadWeights(dir)) {
      assertEquals(20, loaded.config().nInner());
      assertArrayEquals(new long[] {8, 20}, loaded.tensor("h.1.mlp.c_fc.weight").shape());
      assertArrayEquals(new long[] {20, 8}, loaded.tensor("h.1.mlp.c_proj.weight").shape());
    }
    setConfigKey("\"n_inner\" : 20", "\"n_inner\" : null");
    assertProblem("model.safetensors", "tensor h.0.mlp.c_fc.weight has shape [8, 20], expected [8, 32]");
  }

  @Test
  void shardedCheckpointLoadsThroughItsIndex() throws IOException {
    try (GptWeights w = RandomGpt2.create(SMALL.withUntiedHead(), 5)) {
      HfModelWriter.writeSharded(w, dir, DType.F32, 3);
      HfModelWriter.writeByteLevelTokenizer(dir);
      try (LoadedModel loaded = HfModelLoader.load(dir)) {
        assertEquals(3, loaded.weightFiles().size());
        assertEquals("model-00003-of-00003.safetensors", loaded.weightFiles().get(2).getFileName().toString());
        assertEquals(w.tensors().keySet(), loaded.weights().tensors().keySet());
        for (String name : w.tensors().keySet()) {
          assertEquals(-1, w.tensor(name).data().mismatch(loaded.weights().tensor(name).data()), name);
        }
      }
    }
    String index = Files.readString(dir.resolve("model.safetensors.index.json"));
    Files.writeString(dir.resolve("model.safetensors.index.json"),
        index.replace("\"transformer.wte.weight\" : \"model-00001", "\"transformer.wte.weight\" : \"model-00002"));
    assertProblem("model-00002-of-00003.safetensors", "does not hold tensor transformer.wte.weight, which"
        + " model.safetensors.index.json places there");
    Files.writeString(dir.resolve("model.safetensors.index.json"),
        index.replace("\"transformer.wte.weight\" : \"model-00001-of-00003.safetensors\"",
            "\"transformer.wte.weight\" : \"../model-00001-of-00003.safetensors\""));
    assertProblem("model.safetensors.index.json", "weight_map maps transformer.wte.weight to"
        + " \"../model-00001-of-00003.safetensors\", not a file name in the model directory");
    Files.writeString(dir.resolve("model.safetensors.index.json"), index);
    Files.delete(dir.resolve("model-00002-of-00003.safetensors"));
    assertProblem("model-00002-of-00003.safetensors", "file is missing (model.safetensors.index.json names it for");
  }

  @Test
  void eosIdsComeFromGenerationConfigThenConfigThenTokenizer() throws IOException {
    try (GptWeights w = RandomGpt2.create(SMALL, 6)) {
      HfModelWriter.write(w, dir, DType.F32);
    }
    HfModelWriter.writeByteLevelTokenizer(dir);
    assertEos(Set.of(256), "tokenizer");
    setConfigKey("\"n_inner\"", "\"eos_token_id\" : 7,\n  \"n_inner\"");
    assertEos(Set.of(7), "config.json");
    HfModelWriter.writeGenerationConfig(dir, 42);
    assertEos(Set.of(42), "generation_config.json");
    HfModelWriter.writeGenerationConfig(dir, 42, 9, 256);
    assertEos(Set.of(42, 9, 256), "generation_config.json");
    Files.writeString(dir.resolve("generation_config.json"), "{\"eos_token_id\": null}");
    assertEos(Set.of(7), "config.json");
    HfModelWriter.writeGenerationConfig(dir, 260);
    assertLoadProblem("generation_config.json", "eos_token_id 260 is outside the vocabulary (vocab_size 260)");
    Files.writeString(dir.resolve("generation_config.json"), "{\"eos_token_id\": \"</s>\"}");
    assertLoadProblem("generation_config.json", "eos_token_id \"</s>\" is not a token id");
  }

  @Test
  void tokenizerLargerThanTheVocabularyIsRefusedWithBothNumbers() throws IOException {
    try (GptWeights w = RandomGpt2.create(new ModelConfig(1, 1, 4, 8, 200, 1e-5, "gelu_new"), 1)) {
      HfModelWriter.write(w, dir, DType.F32);
    }
    HfModelWriter.writeByteLevelTokenizer(dir);
    assertLoadProblem("config.json", "vocab_size 200 is smaller than the tokenizer's 257 tokens"
        + " (vocab.json + merges.txt): ids 200..256 would have no embedding row");
  }

  @Test
  void paddedVocabularyLoads() {
    try (GptWeights w = RandomGpt2.create(SMALL, 1)) {
      HfModelWriter.write(w, dir, DType.F32);
    }
    HfModelWriter.writeByteLevelTokenizer(dir);
    try (LoadedModel m = HfModelLoader.load(dir)) {
      assertEquals(260, m.weights().config().vocabSize());
      assertEquals(257, m.tokenizer().vocabSize());
    }
  }

  @Test
  void configKeysThatChangeTheMathAreRefusedByNameAndValue() throws IOException {
    try (GptWeights w = RandomGpt2.create(SMALL, 1)) {
      HfModelWriter.write(w, dir, DType.F32);
    }
    String config = Files.readString(dir.resolve("config.json"));
    for (String[] c : List.of(
        new String[] {"\"scale_attn_by_inverse_layer_idx\": true", "scale_attn_by_inverse_layer_idx true is not supported"},
        new String[] {"\"scale_attn_weights\": false", "scale_attn_weights false is not supported"},
        new String[] {"\"add_cross_attention\": true", "add_cross_attention true is not supported"},
        new String[] {"\"quantization_config\": {\"quant_method\": \"bitsandbytes\"}",
            "quantization_config quant_method bitsandbytes is not supported"},
        new String[] {"\"architectures\": [\"GPT2ForSequenceClassification\"]",
            "architectures GPT2ForSequenceClassification is not a GPT-2 language model"},
        new String[] {"\"tie_word_embeddings\": \"yes\"", "tie_word_embeddings \"yes\" is not a boolean"},
        new String[] {"\"n_inner\": 2.5", "field n_inner is missing or not an integer"})) {
      String key = c[0].substring(0, c[0].indexOf(':'));
      Files.writeString(dir.resolve("config.json"), config.replaceFirst("\\{",
          "{" + c[0] + ",").replace("  " + key + " : ", "  \"ignored\" : "));
      assertProblem("config.json", c[1]);
    }
    // accepted: they do not change what a fp32 model computes
    Files.writeString(dir.resolve("config.json"), config.replaceFirst("\\{",
        "{\"reorder_and_upcast_attn\": true, \"scale_attn_weights\": true, \"use_cache\": true,"));
    HfModelLoader.loadWeights(dir).close();
  }

  private void assertEos(Set<Integer> ids, String source) {
    try (LoadedModel m = HfModelLoader.load(dir)) {
      assertEquals(ids, m.eos().ids());
      assertEquals(source, m.eos().source());
    }
  }

  private void setConfigKey(String find, String replace) throws IOException {
    Path config = dir.resolve("config.json");
    String json = Files.readString(config);
    assertTrue(json.contains(find), json);
    Files.writeString(config, json.replace(find, replace));
  }

  private void assertProblem(String file, String problem) {
    ModelLoadException e = assertThrows(ModelLoadException.class, () -> HfModelLoader.loadWeights(dir));
    assertEquals(file, e.file().getFileName().toString(), e.getMessage());
    assertTrue(e.getMessage().startsWith(file + ": " + problem), e.getMessage());
  }

  private void assertLoadProblem(String file, String problem) {
    ModelLoadException e = assertThrows(ModelLoadException.class, () -> HfModelLoader.load(dir));
    assertEquals(file, e.file().getFileName().toString(), e.getMessage());
    assertTrue(e.getMessage().startsWith(file + ": " + problem), e.getMessage());
  }
}
