package dev.radixserve.model.weights;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.radixserve.model.LlamaConfig;
import dev.radixserve.model.ModelConfig;
import dev.radixserve.model.tokenizer.ByteLevelAlphabet;
import dev.radixserve.model.tokenizer.TokenizerLoader;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Writes weights as a Hugging Face model directory (config.json + model.safetensors, or shards
 * with their index; optionally generation_config.json and a byte-level tokenizer), for tests and
 * tooling: the tests build tiny model directories with it. F16 rounds to nearest even; BF16
 * rounds to nearest even too (not truncation). An untied head is written as {@code
 * lm_head.weight}, never under the name prefix (as Hugging Face's GPT2LMHeadModel saves it).
 */
public final class HfModelWriter {

  private static final ObjectMapper JSON = new ObjectMapper();

  private HfModelWriter() {}

  /** Canonical names (no {@code transformer.} prefix), lm_head tied (absent). */
  public static void write(GptWeights weights, Path dir, DType dtype) {
    write(weights, dir, dtype, "");
  }

  /** As {@link #write(GptWeights, Path, DType)}, every tensor name preceded by {@code namePrefix}. */
  public static void write(GptWeights weights, Path dir, DType dtype, String namePrefix) {
    try {
      Files.createDirectories(dir);
      writeConfig(weights.config(), dir.resolve(HfModelLoader.CONFIG_JSON));
      Map<String, Tensor> renamed = new LinkedHashMap<>();
      weights.tensors().forEach((name, t) -> renamed.put(storedName(namePrefix, name), t));
      writeSafetensors(renamed, dtype, dir.resolve(HfModelLoader.SAFETENSORS));
    } catch (IOException e) {
      throw new UncheckedIOException("writing model directory " + dir, e);
    }
  }

  /**
   * As Hugging Face's {@code save_pretrained} with a shard size: {@code shards} files {@code
   * model-0000i-of-0000n.safetensors} holding consecutive tensors (names under {@code
   * transformer.}), and {@code model.safetensors.index.json} mapping each name to its file.
   */
  public static void writeSharded(GptWeights weights, Path dir, DType dtype, int shards) {
    Map<String, Tensor> stored = new LinkedHashMap<>();
    weights.tensors().forEach((name, t) -> stored.put(storedName(HfModelLoader.PREFIX, name), t));
    try {
      Files.createDirectories(dir);
      writeConfig(weights.config(), dir.resolve(HfModelLoader.CONFIG_JSON));
      writeShards(stored, dir, dtype, shards);
    } catch (IOException e) {
      throw new UncheckedIOException("writing model directory " + dir, e);
    }
  }

  /**
   * A Llama-family checkpoint as Hugging Face's {@code save_pretrained} writes it: the family's
   * {@code config.json} keys, tensors under {@code model.} ({@code lm_head.weight} without), in
   * one {@code model.safetensors} ({@code shards} 1) or in shards with their index.
   */
  public static void write(LlamaWeights weights, Path dir, DType dtype, int shards) {
    Map<String, Tensor> stored = new LinkedHashMap<>();
    weights.tensors().forEach((name, t) ->
        stored.put(name.equals(LlamaWeights.LM_HEAD) ? name : "model." + name, t));
    try {
      Files.createDirectories(dir);
      JSON.writerWithDefaultPrettyPrinter().writeValue(
          dir.resolve(HfModelLoader.CONFIG_JSON).toFile(), llamaConfig(weights.config(), dtype));
      if (shards == 1) {
        writeSafetensors(stored, dtype, dir.resolve(HfModelLoader.SAFETENSORS));
      } else {
        writeShards(stored, dir, dtype, shards);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("writing model directory " + dir, e);
    }
  }

  private static void writeShards(Map<String, Tensor> stored, Path dir, DType dtype, int shards)
      throws IOException {
    List<String> names = new ArrayList<>(stored.keySet());
    if (shards < 1 || shards > names.size()) {
      throw new IllegalArgumentException(shards + " shards for " + names.size() + " tensors");
    }
    ObjectNode index = JSON.createObjectNode();
    ObjectNode weightMap = JSON.createObjectNode();
    long totalBytes = 0;
    for (int k = 0; k < shards; k++) {
      String file = String.format("model-%05d-of-%05d.safetensors", k + 1, shards);
      Map<String, Tensor> part = new LinkedHashMap<>();
      for (String name : names.subList(k * names.size() / shards, (k + 1) * names.size() / shards)) {
        Tensor t = stored.get(name);
        part.put(name, t);
        weightMap.put(name, file);
        totalBytes += t.elementCount() * stored(t, dtype).bytes();
      }
      writeSafetensors(part, dtype, dir.resolve(file));
    }
    index.putObject("metadata").put("total_size", totalBytes);
    index.set("weight_map", weightMap);
    JSON.writerWithDefaultPrettyPrinter().writeValue(
        dir.resolve(HfModelLoader.SAFETENSORS_INDEX).toFile(), index);
  }

  /** The keys Hugging Face's config class of {@code c.modelType()} writes, with c's values. */
  static ObjectNode llamaConfig(LlamaConfig c, DType dtype) {
    ObjectNode n = JSON.createObjectNode();
    n.putArray("architectures").add(LlamaConfigReader.ARCHITECTURES.get(c.modelType()));
    n.put("model_type", c.modelType());
    n.put("hidden_act", "silu");
    n.put("hidden_size", c.hiddenSize());
    n.put("intermediate_size", c.intermediateSize());
    n.put("num_hidden_layers", c.nLayer());
    n.put("num_attention_heads", c.nHeads());
    n.put("num_key_value_heads", c.kvHeads());
    if (c.modelType().equals("qwen3") || c.headDim() != c.hiddenSize() / c.nHeads()) {
      n.put("head_dim", c.headDim());
    }
    n.put("max_position_embeddings", c.nPositions());
    n.put("vocab_size", c.vocabSize());
    n.put("rms_norm_eps", c.rmsNormEps());
    n.put("rope_theta", c.rope().theta());
    LlamaConfig.Rope r = c.rope();
    switch (r.type()) {
      case "default" -> n.putNull("rope_scaling");
      case "linear" -> n.putObject("rope_scaling").put("rope_type", "linear").put("factor", r.factor());
      default -> n.putObject("rope_scaling").put("rope_type", r.type()).put("factor", r.factor())
          .put("low_freq_factor", r.lowFreqFactor()).put("high_freq_factor", r.highFreqFactor())
          .put("original_max_position_embeddings", r.originalMaxPositions());
    }
    switch (c.modelType()) {
      case "llama" -> n.put("attention_bias", c.oBias()).put("mlp_bias", c.mlpBias())
          .put("pretraining_tp", 1);
      case "qwen3" -> n.put("attention_bias", c.oBias()).put("use_sliding_window", false)
          .putNull("sliding_window");
      case "qwen2" -> n.put("use_sliding_window", false).put("sliding_window", c.nPositions());
      case "mistral" -> n.putNull("sliding_window");
      default -> throw new IllegalArgumentException("model_type " + c.modelType());
    }
    n.put("tie_word_embeddings", c.tieWordEmbeddings());
    n.put("torch_dtype", switch (dtype) {
      case F32 -> "float32";
      case F16 -> "float16";
      case BF16 -> "bfloat16";
      case I32 -> throw new IllegalArgumentException("I32 is no model dtype");
    });
    return n;
  }

  /** {@code generation_config.json} with these {@code eos_token_id}s (one: an int; more: a list). */
  public static void writeGenerationConfig(Path dir, int... eosTokenIds) {
    ObjectNode n = JSON.createObjectNode();
    n.put("_from_model_config", false);
    if (eosTokenIds.length == 1) {
      n.put("eos_token_id", eosTokenIds[0]);
    } else {
      var ids = n.putArray("eos_token_id");
      for (int id : eosTokenIds) {
        ids.add(id);
      }
    }
    writeJson(n, dir.resolve(EosTokens.GENERATION_CONFIG_JSON));
  }

  /**
   * A byte-level BPE tokenizer without merges, as {@code vocab.json} + {@code merges.txt}: ids
   * 0..255 are the bytes, 256 is {@code <|endoftext|>} (257 tokens). Every text encodes to its
   * UTF-8 bytes, so a tiny model can serve any prompt.
   */
  public static void writeByteLevelTokenizer(Path dir) {
    ObjectNode vocab = JSON.createObjectNode();
    for (int b = 0; b < 256; b++) {
      vocab.put(ByteLevelAlphabet.encode(new byte[] {(byte) b}), b);
    }
    vocab.put("<|endoftext|>", 256);
    writeJson(vocab, dir.resolve(TokenizerLoader.VOCAB_JSON));
    try {
      Files.writeString(dir.resolve(TokenizerLoader.MERGES_TXT), "#version: 0.2\n");
    } catch (IOException e) {
      throw new UncheckedIOException("writing " + dir.resolve(TokenizerLoader.MERGES_TXT), e);
    }
  }

  private static String storedName(String prefix, String name) {
    return name.equals(GptWeights.LM_HEAD) ? name : prefix + name;
  }

  private static void writeJson(ObjectNode n, Path file) {
    try {
      Files.createDirectories(file.getParent());
      JSON.writerWithDefaultPrettyPrinter().writeValue(file.toFile(), n);
    } catch (IOException e) {
      throw new UncheckedIOException("writing " + file, e);
    }
  }

  static void writeConfig(ModelConfig c, Path file) throws IOException {
    ObjectNode n = JSON.createObjectNode();
    n.put("model_type", "gpt2");
    n.putArray("architectures").add("GPT2LMHeadModel");
    n.put("n_layer", c.nLayer());
    n.put("n_head", c.nHead());
    n.put("n_embd", c.nEmbd());
    n.put("n_positions", c.nPositions());
    n.put("n_ctx", c.nPositions());
    n.put("vocab_size", c.vocabSize());
    n.put("layer_norm_epsilon", c.layerNormEpsilon());
    n.put("activation_function", c.activationFunction());
    if (c.nInner() == 4 * c.nEmbd()) {
      n.putNull("n_inner");
    } else {
      n.put("n_inner", c.nInner());
    }
    if (!c.tieWordEmbeddings()) {
      n.put("tie_word_embeddings", false);
    }
    JSON.writerWithDefaultPrettyPrinter().writeValue(file.toFile(), n);
  }

  /**
   * Writes tensors (any float dtype in memory) converted to {@code dtype}, in map order; I32
   * tensors (a pre-quantized checkpoint's packed codes) stay I32.
   */
  public static void writeSafetensors(Map<String, Tensor> tensors, DType dtype, Path file)
      throws IOException {
    ObjectNode header = JSON.createObjectNode();
    long offset = 0;
    for (Map.Entry<String, Tensor> e : tensors.entrySet()) {
      DType stored = stored(e.getValue(), dtype);
      long bytes = e.getValue().elementCount() * stored.bytes();
      ObjectNode info = header.putObject(e.getKey());
      info.put("dtype", stored.name());
      var shape = info.putArray("shape");
      for (long d : e.getValue().shape()) {
        shape.add(d);
      }
      info.putArray("data_offsets").add(offset).add(offset + bytes);
      offset += bytes;
    }
    byte[] json = JSON.writeValueAsBytes(header);
    int padded = (json.length + 7) / 8 * 8; // keep the data 8-byte aligned; spaces are valid JSON
    try (OutputStream out = new java.io.BufferedOutputStream(Files.newOutputStream(file), 1 << 16)) {
      out.write(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(padded).array());
      out.write(json);
      out.write(" ".repeat(padded - json.length).getBytes(StandardCharsets.US_ASCII));
      for (Tensor t : tensors.values()) {
        writeData(t, stored(t, dtype), out);
      }
    }
  }

  private static DType stored(Tensor t, DType dtype) {
    return t.dtype().isFloat() ? dtype : t.dtype();
  }

  private static void writeData(Tensor t, DType dtype, OutputStream out) throws IOException {
    ByteBuffer buf = ByteBuffer.allocate(1 << 16).order(ByteOrder.LITTLE_ENDIAN);
    long n = t.elementCount();
    for (long i = 0; i < n; i++) {
      if (buf.remaining() < 4) {
        out.write(buf.array(), 0, buf.position());
        buf.clear();
      }
      switch (dtype) {
        case F32 -> buf.putFloat(t.get(i));
        case F16 -> buf.putShort(Float.floatToFloat16(t.get(i)));
        case BF16 -> buf.putShort(toBf16(t.get(i)));
        case I32 -> buf.putInt(t.getInt(i));
      }
    }
    out.write(buf.array(), 0, buf.position());
  }

  static short toBf16(float v) {
    int bits = Float.floatToRawIntBits(v);
    if (Float.isNaN(v)) {
      return (short) ((bits >>> 16) | 0x40); // keep it a (quiet) NaN
    }
    return (short) ((bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16);
  }
}
