package dev.radixserve.model.weights;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.model.ModelConfig;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HfModelLoaderTest {

  static final ModelConfig TINY = new ModelConfig(2, 2, 8, 16, 64, 1e-5, "gelu_new");

  @TempDir Path dir;
  GptWeights original;

  @BeforeEach
  void create() {
    original = RandomGpt2.create(TINY, 11);
  }

  @AfterEach
  void close() {
    original.close();
  }

  @Test
  void f32RoundTripIsBitIdentical() {
    HfModelWriter.write(original, dir, DType.F32);
    try (GptWeights loaded = (GptWeights) HfModelLoader.loadWeights(dir)) {
      assertEquals(TINY, loaded.config());
      assertEquals(original.tensors().keySet(), loaded.tensors().keySet());
      for (String name : original.tensors().keySet()) {
        Tensor a = original.tensor(name);
        Tensor b = loaded.tensor(name);
        assertEquals(DType.F32, b.dtype());
        assertArrayEquals(a.shape(), b.shape());
        assertEquals(-1, a.data().mismatch(b.data()), name);
      }
    }
  }

  @Test
  void f16RoundTripRoundsEachValue() {
    HfModelWriter.write(original, dir, DType.F16);
    try (GptWeights loaded = (GptWeights) HfModelLoader.loadWeights(dir)) {
      for (String name : original.tensors().keySet()) {
        float[] a = original.tensor(name).toFloatArray();
        float[] b = loaded.tensor(name).toFloatArray();
        assertEquals(DType.F16, loaded.tensor(name).dtype());
        for (int i = 0; i < a.length; i++) {
          assertEquals(Float.float16ToFloat(Float.floatToFloat16(a[i])), b[i], name + "[" + i + "]");
        }
      }
    }
  }

  @Test
  void bf16RoundTripRoundsToNearest() {
    HfModelWriter.write(original, dir, DType.BF16);
    try (GptWeights loaded = (GptWeights) HfModelLoader.loadWeights(dir)) {
      float[] a = original.tensor("wte.weight").toFloatArray();
      float[] b = loaded.tensor("wte.weight").toFloatArray();
      for (int i = 0; i < a.length; i++) {
        assertTrue(Math.abs(a[i] - b[i]) <= Math.ulp(a[i]) * 65536 / 2, "wte[" + i + "]");
      }
    }
    assertEquals(Float.floatToRawIntBits(1.0f) >>> 16, HfModelWriter.toBf16(1.0f) & 0xffff);
    // 1 + 2^-8 lies halfway between bf16 1.0 and 1 + 2^-7: ties go to even (1.0)
    assertEquals(0x3f80, HfModelWriter.toBf16(1.0f + 0x1p-8f) & 0xffff);
    assertEquals(0x3f81, HfModelWriter.toBf16(1.0f + 0x1p-8f + 0x1p-20f) & 0xffff);
  }

  @Test
  void transformerPrefixIsAccepted() {
    HfModelWriter.write(original, dir, DType.F32, "transformer.");
    try (GptWeights loaded = (GptWeights) HfModelLoader.loadWeights(dir)) {
      assertEquals(-1, original.tensor("h.1.mlp.c_fc.weight").data().mismatch(loaded.tensor("h.1.mlp.c_fc.weight").data()));
    }
  }

  @Test
  void attentionBiasBuffersAndTiedLmHeadAreAccepted() throws IOException {
    Map<String, Tensor> tensors = new LinkedHashMap<>();
    original.tensors().forEach((n, t) -> tensors.put("transformer." + n, t));
    tensors.put("transformer.h.0.attn.bias", original.tensor("ln_f.weight"));
    tensors.put("transformer.h.0.attn.masked_bias", original.tensor("ln_f.bias"));
    tensors.put("lm_head.weight", original.tensor("wte.weight"));
    writeDir(tensors);
    try (GptWeights loaded = (GptWeights) HfModelLoader.loadWeights(dir)) {
      assertEquals(original.tensors().keySet(), loaded.tensors().keySet());
    }
  }

  @Test
  void lmHeadThatDiffersFromWteNeedsTieWordEmbeddingsFalse() throws IOException {
    Map<String, Tensor> tensors = new LinkedHashMap<>(original.tensors());
    try (GptWeights other = RandomGpt2.create(TINY, 12)) {
      tensors.put("lm_head.weight", other.tensor("wte.weight"));
      writeDir(tensors);
    }
    assertProblem(HfModelLoader.SAFETENSORS, "lm_head.weight differs from wte.weight, but config.json"
        + " has tie_word_embeddings true (the default)");
  }

  @Test
  void missingFilesAreNamed() {
    assertProblem("config.json", "file is missing");
    HfModelWriter.write(original, dir, DType.F32);
    assertDoesDelete("model.safetensors");
    assertProblem("model.safetensors", "file is missing");
  }

  @Test
  void unknownArchitectureIsRejected() throws IOException {
    HfModelWriter.write(original, dir, DType.F32);
    Files.writeString(dir.resolve("config.json"), "{\"model_type\": \"falcon\", \"n_layer\": 2}");
    assertProblem("config.json", "unknown architecture falcon in config.json"
        + " (need gpt2, llama, qwen2, qwen3, mistral, phi3, gemma2 or gemma3_text)");
  }

  @Test
  void unknownActivationIsRejected() throws IOException {
    HfModelWriter.write(original, dir, DType.F32);
    String json = Files.readString(dir.resolve("config.json")).replace("gelu_new", "relu");
    Files.writeString(dir.resolve("config.json"), json);
    assertProblem("config.json", "activation_function relu is not supported (gelu_new, gelu_pytorch_tanh or gelu)");
  }

  @Test
  void wrongShapeIsRejected() throws IOException {
    HfModelWriter.write(original, dir, DType.F32);
    String json = Files.readString(dir.resolve("config.json")).replace("\"n_positions\" : 16", "\"n_positions\" : 32");
    Files.writeString(dir.resolve("config.json"), json);
    assertProblem("model.safetensors", "tensor wpe.weight has shape [16, 8], expected [32, 8]");
  }

  @Test
  void unknownDtypeIsRejected() throws IOException {
    rawSafetensors("{\"wte.weight\":{\"dtype\":\"I8\",\"shape\":[2],\"data_offsets\":[0,2]}}", 2);
    assertProblem("model.safetensors", "tensor wte.weight has dtype I8, expected F32, F16, BF16"
        + " (or I32 in a GPTQ/AWQ checkpoint)");
  }

  @Test
  void integersWhereTheModelNeedsFloatsAreRejected() throws IOException {
    HfModelWriter.write(original, dir, DType.F32);
    Map<String, Tensor> tensors = new LinkedHashMap<>(original.tensors());
    Tensor wte = tensors.get("wte.weight");
    tensors.put("wte.weight", new Tensor("wte.weight", DType.I32, wte.shape(), wte.data()));
    HfModelWriter.writeSafetensors(tensors, DType.F32, dir.resolve("model.safetensors"));
    assertProblem("model.safetensors", "tensor wte.weight holds I32, expected F32, F16 or BF16");
  }

  @Test
  void dataOffsetsPastEndAreRejected() throws IOException {
    rawSafetensors("{\"wte.weight\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", 8);
    assertProblem("model.safetensors", "tensor wte.weight data offsets [0, 16] are out of range of the 8 data bytes");
  }

  @Test
  void headerPastEndIsRejected() throws IOException {
    HfModelWriter.write(original, dir, DType.F32);
    Path file = dir.resolve("model.safetensors");
    Files.write(file, ByteBuffer.allocate(12).order(ByteOrder.LITTLE_ENDIAN).putLong(1000).array());
    assertProblem("model.safetensors", "header of 1000 bytes runs past the end of the file (12 bytes)");
  }

  @Test
  void truncatedFileIsRejected() throws IOException {
    HfModelWriter.write(original, dir, DType.F32);
    Path file = dir.resolve("model.safetensors");
    byte[] all = Files.readAllBytes(file);
    Files.write(file, Arrays.copyOf(all, all.length - 4));
    assertProblem("model.safetensors", "tensor ln_f.bias data offsets [");
    Files.write(file, new byte[5]);
    assertProblem("model.safetensors", "truncated: 5 bytes, a safetensors file has at least 8");
  }

  @Test
  void loadGivesWeightsStandardTokenizerAndItsEos() {
    ModelConfig gpt2Vocab = new ModelConfig(1, 1, 4, 8, 50257, 1e-5, "gelu_new");
    try (GptWeights w = RandomGpt2.create(gpt2Vocab, 1)) {
      HfModelWriter.write(w, dir, DType.F16);
    }
    try (LoadedModel m = HfModelLoader.load(dir)) {
      assertEquals(gpt2Vocab, m.weights().config());
      assertArrayEquals(new int[] {15496, 995}, m.tokenizer().encode("Hello world"));
      assertEquals(Set.of(50256), m.eos().ids());
      assertEquals("tokenizer", m.eos().source());
      assertEquals(List.of(dir.resolve("model.safetensors")), m.weightFiles());
    }
  }

  private void assertDoesDelete(String name) {
    try {
      Files.delete(dir.resolve(name));
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  private void assertProblem(String file, String problem) {
    ModelLoadException e = assertThrows(ModelLoadException.class, () -> HfModelLoader.loadWeights(dir));
    assertEquals(dir.resolve(file), e.file());
    assertTrue(e.getMessage().startsWith(file + ": " + problem), e.getMessage());
  }

  private void writeDir(Map<String, Tensor> tensors) throws IOException {
    HfModelWriter.writeConfig(TINY, dir.resolve("config.json"));
    HfModelWriter.writeSafetensors(tensors, DType.F32, dir.resolve("model.safetensors"));
  }

  private void rawSafetensors(String header, int dataBytes) throws IOException {
    HfModelWriter.writeConfig(TINY, dir.resolve("config.json"));
    byte[] h = header.getBytes(StandardCharsets.UTF_8);
    ByteBuffer b = ByteBuffer.allocate(8 + h.length + dataBytes).order(ByteOrder.LITTLE_ENDIAN);
    b.putLong(h.length).put(h);
    Files.write(dir.resolve("model.safetensors"), b.array());
  }
}
