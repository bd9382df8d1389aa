package dev.radixserve.model.weights;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.radixserve.model.ModelConfig;
import dev.radixserve.model.ModelShape;
import dev.radixserve.model.quant.CheckpointQuantization;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A checkpoint's {@code config.json}: its hyper-parameters (a GPT-2 {@link ModelConfig}, a
 * Llama-family config by {@link LlamaConfigReader}, a Gemma config by {@link GemmaConfigReader})
 * and its {@code eos_token_id}s.
 * Keys whose value would make the model compute something radixserve does not are refused by name
 * and value, never ignored: a model either loads and behaves as its config says, or does not load.
 *
 * @param model the hyper-parameters
 * @param eosTokenIds {@code eos_token_id} (an int or a list), empty when absent or null
 * @param quantization the checkpoint's GPTQ/AWQ {@code quantization_config}, or null
 */
record HfConfig(ModelShape model, List<Integer> eosTokenIds,
    CheckpointQuantization quantization) {

  /** tanh-approximated GELU (GPT-2's, under two names) and exact GELU: what the graph computes. */
  static final Set<String> ACTIVATIONS = Set.of("gelu_new", "gelu_pytorch_tanh", "gelu");
  /** Hugging Face GPT-2 classes whose checkpoint holds the language model as trained. */
  private static final Set<String> ARCHITECTURES =
      Set.of("GPT2LMHeadModel", "GPT2Model", "GPT2DoubleHeadsModel");

  /** transformers 5.18's GPT2Config keys: what {@link #read} makes of each. */
  static final ConfigKeys GPT2_KEYS = ConfigKeys.of("gpt2", Set.of("activation_function",
      "add_cross_attention", "eos_token_id", "layer_norm_epsilon", "n_embd", "n_head", "n_inner",
      "n_layer", "n_positions", "n_ctx", "scale_attn_by_inverse_layer_idx", "scale_attn_weights",
      "tie_word_embeddings", "vocab_size", "torch_dtype"), gpt2Inert());

  private static Map<String, String> gpt2Inert() {
    Map<String, String> inert = new java.util.HashMap<>(ConfigKeys.DECODER_INERT);
    inert.remove("attention_dropout");
    for (String dropout : new String[] {"attn_pdrop", "embd_pdrop", "resid_pdrop"}) {
      inert.put(dropout, "dropout is off at inference");
    }
    inert.put("reorder_and_upcast_attn", "moves the attention product to fp32, where radixserve"
        + " computes attention anyway");
    for (String summary : new String[] {"summary_activation", "summary_first_dropout",
        "summary_proj_to_labels", "summary_type", "summary_use_proj"}) {
      inert.put(summary, "the multiple-choice head of GPT2DoubleHeadsModel, not the language model");
    }
    return inert;
  }

  HfConfig {
    eosTokenIds = List.copyOf(eosTokenIds);
  }

  static HfConfig read(Path dir) {
    Path file = dir.resolve(HfModelLoader.CONFIG_JSON);
    if (!Files.isRegularFile(file)) {
      throw new ModelLoadException(file, "file is missing");
    }
    JsonNode c = JsonFile.readObject(file);
    if (LlamaConfigReader.ARCHITECTURES.containsKey(c.path("model_type").asText())) {
      return new HfConfig(LlamaConfigReader.read(c, file), tokenIds(c, file, "eos_token_id"),
          quantization(c, file));
    }
    if (GemmaConfigReader.handles(c.path("model_type").asText())) {
      // quantization_config is refused by the reader: float Gemma checkpoints only
      return new HfConfig(GemmaConfigReader.read(c, file), tokenIds(c, file, "eos_token_id"),
          null);
    }
    checkArchitecture(c, file);
    GPT2_KEYS.logUnknown(c, file);
    ConfigKeys.checkDtype(c, file);
    checkSupported(c, file);
    String activation = c.path("activation_function").asText("gelu_new");
    if (!ACTIVATIONS.contains(activation)) {
      throw new ModelLoadException(file, "activation_function " + activation
          + " is not supported (gelu_new, gelu_pytorch_tanh or gelu)");
    }
    int nEmbd = ConfigValues.intField(c, file, "n_embd");
    JsonNode inner = c.get("n_inner");
    JsonNode tie = c.get("tie_word_embeddings");
    if (tie != null && !tie.isNull() && !tie.isBoolean()) {
      throw new ModelLoadException(file, "tie_word_embeddings " + tie + " is not a boolean");
    }
    try {
      ModelConfig model = new ModelConfig(
          ConfigValues.intField(c, file, "n_layer"),
          ConfigValues.intField(c, file, "n_head"),
          nEmbd,
          c.has("n_positions") ? ConfigValues.intField(c, file, "n_positions") : ConfigValues.intField(c, file, "n_ctx"),
          ConfigValues.intField(c, file, "vocab_size"),
          c.path("layer_norm_epsilon").asDouble(1e-5),
          activation,
          inner == null || inner.isNull() ? 4 * nEmbd : ConfigValues.intField(c, file, "n_inner"),
          tie == null || tie.isNull() || tie.asBoolean());
      return new HfConfig(model, tokenIds(c, file, "eos_token_id"), quantization(c, file));
    } catch (IllegalArgumentException e) {
      throw new ModelLoadException(file, e.getMessage(), e);
    }
  }

  private static void checkArchitecture(JsonNode c, Path file) {
    String modelType = c.path("model_type").asText("");
    if (!modelType.equals("gpt2")) {
      throw new ModelLoadException(file, "unknown architecture "
          + (modelType.isEmpty() ? "(none)" : modelType)
          + " in config.json (need gpt2, llama, qwen2, qwen3, mistral, phi3, gemma2 or gemma3_text)");
    }
    JsonNode architectures = c.path("architectures");
    if (architectures.isArray() && !architectures.isEmpty()
        && !ARCHITECTURES.contains(architectures.get(0).asText())) {
      throw new ModelLoadException(file, "architectures " + architectures.get(0).asText()
          + " is not a GPT-2 language model (need GPT2LMHeadModel)");
    }
  }

  /**
   * Keys of Hugging Face's GPT2Config that change what the model computes in ways the graph does
   * not. {@code reorder_and_upcast_attn} is accepted: it only moves the attention product to fp32,
   * which is where radixserve computes attention anyway.
   */
  private static void checkSupported(JsonNode c, Path file) {
    refuse(c, file, "scale_attn_weights", false, "attention scores are always scaled by 1/sqrt(head_dim)");
    refuse(c, file, "scale_attn_by_inverse_layer_idx", true, "per-layer attention scaling is not implemented");
    refuse(c, file, "add_cross_attention", true, "cross-attention (an encoder-decoder model) is not supported");
    refuse(c, file, "is_encoder_decoder", true, "an encoder-decoder model is not supported");
  }

  private static void refuse(JsonNode c, Path file, String key, boolean unsupported, String why) {
    JsonNode v = c.get(key);
    if (v != null && !v.isNull() && (!v.isBoolean() || v.asBoolean() == unsupported)) {
      throw new ModelLoadException(file, key + " " + v + " is not supported: " + why);
    }
  }

  /** The quantization files of checkpoints written before {@code quantization_config}. */
  static final List<Map.Entry<String, String>> LEGACY_QUANTIZATION_FILES =
      List.of(Map.entry("quantize_config.json", "gptq"), // AutoGPTQ's
          Map.entry("quant_config.json", "awq")); // AutoAWQ's

  /**
   * The checkpoint's own quantization ({@code quantization_config}: GPTQ or AWQ), or null for
   * float weights; any other is refused by key and value. Without that key, AutoGPTQ's {@code
   * quantize_config.json} or AutoAWQ's {@code quant_config.json} beside config.json says it (the
   * tools wrote only those before Hugging Face read quantized checkpoints; they name no method).
   */
  static CheckpointQuantization quantization(JsonNode c, Path file) {
    JsonNode quant = c.get("quantization_config");
    Path source = file;
    if (quant == null || quant.isNull()) {
      quant = null;
      for (Map.Entry<String, String> legacy : LEGACY_QUANTIZATION_FILES) {
        Path f = file.resolveSibling(legacy.getKey());
        if (quant == null && java.nio.file.Files.isRegularFile(f)) {
          ObjectNode o = ((ObjectNode) JsonFile.readObject(f)).deepCopy();
          o.put("quant_method", o.path("quant_method").asText(legacy.getValue()));
          quant = o;
          source = f;
        }
      }
      if (quant == null) {
        return null;
      }
    }
    try {
      return CheckpointQuantization.parse(quant);
    } catch (IllegalArgumentException e) {
      throw new ModelLoadException(source, e.getMessage(), e);
    }
  }

  /** An int, a list of ints, or absent / null (empty): how HF writes {@code eos_token_id}. */
  static List<Integer> tokenIds(JsonNode c, Path file, String key) {
    JsonNode v = c.get(key);
    List<Integer> ids = new ArrayList<>();
    if (v == null || v.isNull()) {
      return ids;
    }
    if (v.isArray()) {
      v.forEach(id -> ids.add(tokenId(id, file, key)));
    } else {
      ids.add(tokenId(v, file, key));
    }
    return ids;
  }

  private static int tokenId(JsonNode v, Path file, String key) {
    if (!v.isIntegralNumber() || !v.canConvertToInt() || v.asInt() < 0) {
      throw new ModelLoadException(file, key + " " + v + " is not a token id (an int >= 0 or a list of them)");
    }
    return v.asInt();
  }

}
