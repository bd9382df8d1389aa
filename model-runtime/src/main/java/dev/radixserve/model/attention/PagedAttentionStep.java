package dev.radixserve.model.attention;

import java.lang.foreign.MemorySegment;

/**
 * One paged-attention step's tensors, in the layout of ONNX Runtime's
 * {@code com.microsoft.PagedAttention} (fp32 here).
 *
 * <pre>
 *   query        [T, H * D]          key, value  [T, KVH * D]        output [T, H * D]
 *   keyCache, valueCache [numBlocks, B, KVH, D]  (read, and written at the new tokens' slots)
 *   cuSeqlens    [S + 1]  start of each sequence's new tokens in T (cuSeqlens[S] == T)
 *   pastLens     [S]      tokens of each sequence already in the caches
 *   blockTables  [S, maxBlocks]  row-major; position p of sequence s is in block
 *                                blockTables[s * maxBlocks + p / B], slot p % B
 * </pre>
 */
record PagedAttentionStep(
    MemorySegment query,
    MemorySegment key,
    MemorySegment value,
    MemorySegment keyCache,
    MemorySegment valueCache,
    MemorySegment output,
    int tokens,
    int numBlocks,
    int blockSize,
    int headSize,
    int[] cuSeqlens,
    int[] pastLens,
    int[] blockTables,
    int maxBlocks) {

  int sequences() {
    return pastLens.length;
  }

  int newTokens(int s) {
    return cuSeqlens[s + 1] - cuSeqlens[s];
  }
}
