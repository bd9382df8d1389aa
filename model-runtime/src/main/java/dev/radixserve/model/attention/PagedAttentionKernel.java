package dev.radixserve.model.attention;

import dev.radixserve.model.graph.KvDtype;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;

/**
 * The CPU paged attention (DESIGN.md's graph contract; fp32 activations, caches of any {@link
 * KvDtype}): each query attends only to its own
 * sequence's blocks, read where they lie in the pool; the new keys and values are written into
 * their slots in place first, so a query sees its own sequence's new tokens through the pool too.
 *
 * <pre>
 *   1 validate   every id, length and shape; nothing is written if anything is wrong
 *   2 write      new K/V rows of token t (sequence s, position p = past[s] + t - cu[s]) to
 *                slot (table[s][p / B], p % B) of both caches, each kv head's row encoded in the
 *                cache's dtype (int8/fp8 with its scale): the only write a slot ever gets
 *   3 attend     items (sequence, run of up to {@value #QUERY_RUN} queries, a kv head's group
 *                of query heads; or every head for a
 *                run of one query), longest first, over the thread pool: query at
 *                position p sees positions [0, p], or with a window W only (p - W, p]; scores
 *                soft-capped when asked ({@link ScoreRule})
 * </pre>
 *
 * A windowed query reads only the blocks that overlap its window: a sliding-window layer costs
 * its window, not its context. Validation still checks every block id of the table (the ids are
 * the caller's contract whatever the layer), but blocks before a window are never read.
 *
 * Not thread-safe itself (one kernel per graph node; ONNX Runtime runs a node on one thread at a
 * time); the items of step 3 run concurrently and write disjoint output rows.
 */
final class PagedAttentionKernel {

  /**
   * Queries of one sequence and kv head group per work item: enough to amortise each block's
   * copy and conversion (32 rather than 16: 8B shape, int8 KV, 512 queries at 4k context,
   * 1.15-1.25x faster), small to balance and to keep the scores' scratch (queries × heads ×
   * context floats, 16 MB per thread at 32k of context and 4 heads a group) modest.
   */
  static final int QUERY_RUN = 32;

  /** Runs independent work items, possibly concurrently; returns when all are done. */
  @FunctionalInterface
  interface Parallel {
    void forEach(int items, java.util.function.IntConsumer item);

    Parallel SERIAL = (items, item) -> {
      for (int i = 0; i < items; i++) {
        item.accept(i);
      }
    };
  }

  private final int numHeads;
  private final int kvHeads;
  private final int headSize;
  private final float scale;
  private final ScoreRule rule;
  private final RowAttention math;
  private final KvDtype kv;
  /** Slots (block * B + offset) and blocks written this step: reused across steps. */
  private final BitSet written = new BitSet();
  private final BitSet writtenBlocks = new BitSet();

  /** Full causal attention, no soft cap, fp32 caches. */
  PagedAttentionKernel(int numHeads, int kvHeads, int headSize, float scale, RowAttention math) {
    this(numHeads, kvHeads, headSize, scale, ScoreRule.FULL, math, KvDtype.FLOAT32);
  }

  /** fp32 caches. */
  PagedAttentionKernel(int numHeads, int kvHeads, int headSize, float scale, ScoreRule rule,
      RowAttention math) {
    this(numHeads, kvHeads, headSize, scale, rule, math, KvDtype.FLOAT32);
  }

  /**
   * @param scale score scale; 0 means {@code 1 / sqrt(headSize)} (the op's default)
   * @param rule the window and soft cap
   * @param math the inner loops, made for caches of {@code kv}
   */
  PagedAttentionKernel(int numHeads, int kvHeads, int headSize, float scale, ScoreRule rule,
      RowAttention math, KvDtype kv) {
    if (numHeads <= 0 || kvHeads <= 0 || numHeads % kvHeads != 0) {
      throw new IllegalArgumentException("num_heads " + numHeads + " must be a positive multiple"
          + " of kv_num_heads " + kvHeads);
    }
    this.numHeads = numHeads;
    this.kvHeads = kvHeads;
    this.headSize = headSize;
    this.scale = scale == 0 ? (float) (1.0 / Math.sqrt(headSize)) : scale;
    this.rule = rule;
    this.math = math;
    this.kv = kv;
  }

  int headSize() {
    return headSize;
  }

  void run(PagedAttentionStep step, Parallel parallel) {
    if (step.headSize() != headSize) {
      throw new IllegalArgumentException("head size " + step.headSize() + ", kernel made for "
          + headSize);
    }
    validate(step);
    writeNewRows(step);
    List<long[]> items = items(step);
    parallel.forEach(items.size(), i -> attend(step, items.get(i)));
  }

  // ---- 1 validate ----

  /** Throws {@link IllegalArgumentException} unless every id, length and slot of the step is valid. */
  void validate(PagedAttentionStep s) {
    int[] cu = s.cuSeqlens();
    int seqs = s.sequences();
    if (cu.length != seqs + 1) {
      throw new IllegalArgumentException("cumulative_sequence_length has " + cu.length
          + " entries for " + seqs + " sequences (need " + (seqs + 1) + ")");
    }
    if (cu[0] != 0 || cu[seqs] != s.tokens()) {
      throw new IllegalArgumentException("cumulative_sequence_length must run from 0 to "
          + s.tokens() + " tokens, got " + cu[0] + " .. " + cu[seqs]);
    }
    if (s.blockTables().length != seqs * s.maxBlocks()) {
      throw new IllegalArgumentException("block_table has " + s.blockTables().length
          + " entries, not " + seqs + " x " + s.maxBlocks());
    }
    int b = s.blockSize();
    written.clear();
    writtenBlocks.clear();
    for (int q = 0; q < seqs; q++) {
      int past = s.pastLens()[q];
      int fresh = s.newTokens(q);
      if (fresh < 0) {
        throw new IllegalArgumentException("cumulative_sequence_length decreases at sequence " + q);
      }
      if (past < 0) {
        throw new IllegalArgumentException("sequence " + q + ": past length " + past + " < 0");
      }
      long total = (long) past + fresh;
      if (total > (long) s.maxBlocks() * b) {
        throw new IllegalArgumentException("sequence " + q + ": past length " + past + " + "
            + fresh + " new tokens exceed its block table (" + s.maxBlocks() + " blocks of " + b
            + " tokens)");
      }
      int blocks = (int) ((total + b - 1) / b);
      for (int k = 0; k < blocks; k++) {
        int id = s.blockTables()[q * s.maxBlocks() + k];
        if (id < 0 || id >= s.numBlocks()) {
          throw new IllegalArgumentException("sequence " + q + ": block id " + id
              + " at table index " + k + " outside [0, " + s.numBlocks() + ")");
        }
      }
      for (int p = past; p < total; p++) {
        long slot = slot(s, q, p);
        if (written.get((int) slot)) {
          throw new IllegalArgumentException("sequence " + q + ": slot " + slot % b + " of block "
              + slot / b + " is written twice in one step");
        }
        written.set((int) slot);
        writtenBlocks.set((int) (slot / b));
      }
    }
    // a slot written now must not be some sequence's past (a shared block is read-only)
    for (int q = 0; q < seqs; q++) {
      int past = s.pastLens()[q];
      for (int k = 0; k * b < past; k++) {
        if (!writtenBlocks.get(s.blockTables()[q * s.maxBlocks() + k])) {
          continue;
        }
        for (int p = k * b; p < Math.min(past, (k + 1) * b); p++) {
          long slot = slot(s, q, p);
          if (written.get((int) slot)) {
            throw new IllegalArgumentException("sequence " + q + ": past slot " + slot % b
                + " of block " + slot / b + " is written in this step");
          }
        }
      }
    }
  }

  static long slot(PagedAttentionStep s, int seq, int position) {
    int b = s.blockSize();
    return (long) s.blockTables()[seq * s.maxBlocks() + position / b] * b + position % b;
  }

  // ---- 2 write ----

  private void writeNewRows(PagedAttentionStep s) {
    long inRow = (long) kvHeads * headSize * Float.BYTES;
    long headIn = (long) headSize * Float.BYTES;
    long headOut = kv.headRowBytes(headSize);
    long rowBytes = kvHeads * headOut;
    for (int q = 0; q < s.sequences(); q++) {
      int past = s.pastLens()[q];
      for (int t = s.cuSeqlens()[q]; t < s.cuSeqlens()[q + 1]; t++) {
        long dst = slot(s, q, past + t - s.cuSeqlens()[q]) * rowBytes;
        if (kv == KvDtype.FLOAT32) {
          MemorySegment.copy(s.key(), t * inRow, s.keyCache(), dst, rowBytes);
          MemorySegment.copy(s.value(), t * inRow, s.valueCache(), dst,
              rowBytes);
          continue;
        }
        for (int h = 0; h < kvHeads; h++) {
          kv.encodeRow(s.key(), t * inRow + h * headIn, s.keyCache(), dst + h * headOut,
              headSize);
          kv.encodeRow(s.value(), t * inRow + h * headIn, s.valueCache(), dst + h * headOut,
              headSize);
        }
      }
    }
  }

  // ---- 3 attend ----

  /** Work items {sequence, first token, end token, first head, heads, keys}, costliest first. */
  private List<long[]> items(PagedAttentionStep s) {
    List<long[]> items = new ArrayList<>();
    for (int q = 0; q < s.sequences(); q++) {
      for (int t = s.cuSeqlens()[q]; t < s.cuSeqlens()[q + 1]; t += QUERY_RUN) {
        int end = Math.min(t + QUERY_RUN, s.cuSeqlens()[q + 1]);
        long keys = (long) (end - t)
            * Math.min(rule.window(), s.pastLens()[q] + end - s.cuSeqlens()[q]);
        // A run of one query (a decode step) takes every head: its slots are then read whole,
        // in order, at the memory's bandwidth (about 1.7x faster than 12 items reading a 256-byte
        // head slice every 3 KB, and than partial rows: docs/benchmarks/journal/2026-11-21-to-28.md, "Decode attention reads
        // whole slots"). A prefill run of up to 32 queries reuses each slot it reads 32 times,
        // and it takes a kv head's group of query heads, so that each block is copied (and
        // converted, for a pool that is not fp32) once for the group, not once per query head
        // (fp32 8B shape, 512 queries at 2k context: 2.0x faster than one head per item).
        int group = end - t == 1 ? numHeads : numHeads / kvHeads;
        for (int h = 0; h < numHeads; h += group) {
          int heads = Math.min(group, numHeads - h);
          items.add(new long[] {q, t, end, h, heads, keys * heads});
        }
      }
    }
    items.sort((x, y) -> Long.compare(y[5], x[5]));
    return items;
  }

  private void attend(PagedAttentionStep s, long[] item) {
    int q = (int) item[0];
    int first = (int) item[1];
    int h = (int) item[3];
    long queryRow = (long) numHeads * headSize * Float.BYTES;
    RowAttention.QueryRun run = new RowAttention.QueryRun(
        first * queryRow + (long) h * headSize * Float.BYTES, queryRow, (int) (item[2] - first),
        s.pastLens()[q] + first - s.cuSeqlens()[q] + 1, s.blockTables(), q * s.maxBlocks(),
        s.blockSize(), kvHeads * kv.headRowBytes(headSize), kv.headRowBytes(headSize), h,
        (int) item[4],
        numHeads / kvHeads, headSize, scale, rule);
    math.attend(run, s.query(), s.keyCache(), s.valueCache(), s.output());
  }

  @Override
  public String toString() {
    return "PagedAttentionKernel[heads " + numHeads + ", kv heads " + kvHeads + ", head size "
        + headSize + ", scale " + scale + ", " + rule + ", " + kv.settingName() + " cache, "
        + math.getClass().getSimpleName() + "]";
  }
}
