package dev.radixserve.server.config;

/**
 * How each event inside a {@code KVEventBatch} is encoded (the batch itself is always a
 * positional array {@code [ts, events, data_parallel_rank]}).
 */
public enum KvEventEncoding {
  /**
   * Tagged positional arrays, {@code ["BlockStored", block_hashes, ...]}: vLLM's msgspec
   * {@code array_like=True} structs, read by every consumer (llm-d-kv-cache, SGLang's router,
   * Dynamo, AIBrix, Kthena).
   */
  ARRAY,
  /**
   * Tagged maps, {@code {"type": "BlockStored", "block_hashes": ...}}: vLLM since PR 42892
   * (mid 2026), for consumers that decode with vLLM's current Python types.
   */
  MAP
}
