package dev.radixserve.model.graph;

import dev.radixserve.model.ModelShape;
import dev.radixserve.model.quant.QuantSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The graph-builder seam between the runner and a model family: one implementation per family
 * ({@link PagedGpt2Graph}, {@link PagedLlamaGraph}), each emitting DESIGN.md's paged graph
 * contract, so the runner binds the same inputs and outputs whatever the family.
 *
 * <pre>
 *   inputs        input_ids int64 [T]   positions int64 [T]   block_tables int32 [S, M]
 *                 cu_seqlens int32 [S+1]   past_lens int32 [S]   logits_index int64 [R]
 *                 attention_metadata int32 [2] (host memory)
 *                 key_cache_{i}, value_cache_{i} dtype [NB, B, KVH, D]        (per layer)
 *   initializers  {@link #initializers()}: the family's weights in dtype, external data supplied
 *                 by the runner from a weights file ONNX Runtime maps (WeightsFile)
 *   outputs       logits float [R, vocab]
 *                 key_cache_out_{i}, value_cache_out_{i}: bound by the runner to the very
 *                 buffers of key_cache_{i} / value_cache_{i} (updated in place)
 * </pre>
 *
 * Positions are absolute: whatever a family does with them (GPT-2's learned table, rotary) is
 * done before a key is written, so a cached prefix's keys serve every request that shares it.
 */
public interface PagedGraph {

  String INPUT_IDS = "input_ids";
  String POSITIONS = "positions";
  String BLOCK_TABLES = "block_tables";
  String CU_SEQLENS = "cu_seqlens";
  String PAST_LENS = "past_lens";
  String LOGITS_INDEX = "logits_index";
  /**
   * int32 [2] in host memory: upper bounds of any sequence's new tokens and of past + new tokens
   * this step (0: unknown). ONNX Runtime's CUDA kernel sizes its launch from them instead of
   * reading the lengths back from the device once per layer; the CPU kernel ignores them.
   */
  String ATTENTION_METADATA = "attention_metadata";
  /** Position of {@code attention_metadata} among PagedAttention's inputs (ONNX Runtime 1.29). */
  int ATTENTION_METADATA_SLOT = 16;
  String LOGITS = "logits";

  /** The shape the runner sizes the KV pool and validates batches by. */
  ModelShape shape();

  /** Every weight the graph reads, with its shape, in the order the runner supplies them. */
  Map<String, long[]> initializers();

  /**
   * The graph for this block size computing in {@code dtype} (weights and activations of that
   * type, logits cast to fp32 at the end), its KV caches holding {@code kv}, its linear layers
   * quantized as {@code quant} says (through {@link Linear}), with the external initializers the
   * runner must supply.
   *
   * @throws dev.radixserve.model.quant.QuantizationException if {@code quant} cannot quantize a
   *     layer (a block size that does not divide its input width)
   */
  OnnxGraph build(int blockSize, GraphDtype dtype, QuantSpec quant, KvDtype kv);

  /**
   * As {@link #build(int, GraphDtype, QuantSpec, KvDtype)} with the KV caches in {@code dtype}
   * too ({@link KvDtype#of}).
   */
  default OnnxGraph build(int blockSize, GraphDtype dtype, QuantSpec quant) {
    return build(blockSize, dtype, quant, KvDtype.of(dtype));
  }

  /** The unquantized graph computing in {@code dtype}. */
  default OnnxGraph build(int blockSize, GraphDtype dtype) {
    return build(blockSize, dtype, QuantSpec.none());
  }

  /** The fp32 graph. */
  default OnnxGraph build(int blockSize) {
    return build(blockSize, GraphDtype.FLOAT32);
  }

  static String keyCache(int layer) {
    return "key_cache_" + layer;
  }

  static String valueCache(int layer) {
    return "value_cache_" + layer;
  }

  static String keyCacheOut(int layer) {
    return "key_cache_out_" + layer;
  }

  static String valueCacheOut(int layer) {
    return "value_cache_out_" + layer;
  }

  /** The seven per-step inputs, in the order {@link #inputNames} lists them first. */
  static List<String> stepInputNames() {
    return List.of(INPUT_IDS, POSITIONS, BLOCK_TABLES, CU_SEQLENS, PAST_LENS, LOGITS_INDEX,
        ATTENTION_METADATA);
  }

  /** Every input: step inputs, then key/value cache per layer. */
  static List<String> inputNames(ModelShape shape) {
    List<String> names = new ArrayList<>(stepInputNames());
    for (int i = 0; i < shape.nLayer(); i++) {
      names.add(keyCache(i));
      names.add(valueCache(i));
    }
    return names;
  }

  /** {@code logits}, then the key and value cache outputs per layer. */
  static List<String> outputNames(ModelShape shape) {
    List<String> names = new ArrayList<>();
    names.add(LOGITS);
    for (int i = 0; i < shape.nLayer(); i++) {
      names.add(keyCacheOut(i));
      names.add(valueCacheOut(i));
    }
    return names;
  }
}
