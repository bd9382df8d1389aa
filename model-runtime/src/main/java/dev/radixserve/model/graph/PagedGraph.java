package dev.radixserve.model.graph;

import dev.radixserve.model.ModelShape;
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
 *                 key_cache_{i}, value_cache_{i} float [NB, B, KVH, D]        (per layer)
 *   initializers  {@link #initializers()}: the family's weights, float, external data supplied
 *                 by the runner at session creation (AddExternalInitializers)
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
  String LOGITS = "logits";

  /** The shape the runner sizes the KV pool and validates batches by. */
  ModelShape shape();

  /** Every weight the graph reads, with its shape, in the order the runner supplies them. */
  Map<String, long[]> initializers();

  /** The serialized ModelProto for this block size. */
  byte[] build(int blockSize);

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

  /** The six per-step inputs, in the order {@link #inputNames} lists them first. */
  static List<String> stepInputNames() {
    return List.of(INPUT_IDS, POSITIONS, BLOCK_TABLES, CU_SEQLENS, PAST_LENS, LOGITS_INDEX);
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
