package dev.radixserve.model.attention;

import dev.radixserve.model.graph.KvDtype;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
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

  /**
   * Items per set of decode sequences ({@link #decodeItems}), each a part of the kv heads (fewer
   * where there are fewer kv heads). 4 against 1 and 2 (KernelBench, 2 threads, 1B shape, bf16
   * pool, 4 sequences sharing 1,024 positions: 3.05 / ~2.0 / 1.7 ms a layer; one sequence: 1.3 /
   * 1.25 / ~1.0): a part reads a quarter of each slot, 256 bytes of the 1B's bf16 rows, and the
   * two threads stay busy to the step's end.
   */
  static final int DECODE_PARTS = 4;

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
    List<Item> items = items(step);
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

  /**
   * A work item: query tokens [first, end) of each of {@code sequences} (one sequence for a
   * prefill run; decode sequences, one token each, that {@link RowAttention#attendDecodes} takes
   * together) for query heads [head, head + heads); {@code cost} orders the items, costliest
   * first.
   */
  private record Item(int[] sequences, int first, int end, int head, int heads, long cost) {}

  private List<Item> items(PagedAttentionStep s) {
    List<Item> items = new ArrayList<>();
    boolean shares = math.sharesDecodeBlocks(numHeads / kvHeads, headSize);
    List<Integer> decodes = new ArrayList<>();
    for (int q = 0; q < s.sequences(); q++) {
      if (shares && s.newTokens(q) == 1) {
        decodes.add(q);
        continue;
      }
      for (int t = s.cuSeqlens()[q]; t < s.cuSeqlens()[q + 1]; t += QUERY_RUN) {
        int end = Math.min(t + QUERY_RUN, s.cuSeqlens()[q + 1]);
        long keys = (long) (end - t) * visible(s, q, end);
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
          items.add(new Item(new int[] {q}, t, end, h, heads, keys * heads));
        }
      }
    }
    decodeItems(s, decodes, items);
    items.sort((x, y) -> Long.compare(y.cost(), x.cost()));
    return items;
  }

  /** Positions that the query tokens up to {@code end} of sequence q see, at most. */
  private long visible(PagedAttentionStep s, int q, int end) {
    return Math.min(rule.window(), s.pastLens()[q] + end - s.cuSeqlens()[q]);
  }

  /**
   * The decode sequences in sets of those whose first blocks are one (a shared prompt's
   * requests: the attention reads each shared block once for the set), each set in
   * {@value #DECODE_PARTS} items of whole kv groups, so that a step of one or a few sets keeps
   * every thread busy (a decode step of one sequence was one item, on one thread).
   */
  private void decodeItems(PagedAttentionStep s, List<Integer> decodes, List<Item> items) {
    int[] tables = s.blockTables();
    int width = s.maxBlocks();
    decodes.sort((x, y) -> Arrays.compare(tables, x * width, (x + 1) * width, tables,
        y * width, (y + 1) * width));
    int parts = Math.min(kvHeads, DECODE_PARTS);
    int group = numHeads / kvHeads;
    for (int from = 0; from < decodes.size(); ) {
      int first = tables[decodes.get(from) * width];
      int to = from + 1;
      while (to < decodes.size() && tables[decodes.get(to) * width] == first) {
        to++;
      }
      int[] set = decodes.subList(from, to).stream().mapToInt(Integer::intValue).toArray();
      long keys = 0;
      for (int q : set) {
        keys += visible(s, q, s.cuSeqlens()[q + 1]);
      }
      for (int p = 0; p < parts; p++) {
        int h = (int) ((long) kvHeads * p / parts) * group;
        int heads = (int) ((long) kvHeads * (p + 1) / parts) * group - h;
        items.add(new Item(set, -1, -1, h, heads, keys * heads));
      }
      from = to;
    }
  }

  private void attend(PagedAttentionStep s, Item item) {
    if (item.first() < 0) {
      RowAttention.QueryRun[] runs = new RowAttention.QueryRun[item.sequences().length];
      for (int m = 0; m < runs.length; m++) {
        int q = item.sequences()[m];
        runs[m] = run(s, q, s.cuSeqlens()[q], 1, item.head(), item.heads());
      }
      math.attendDecodes(runs, s.query(), s.keyCache(), s.valueCache(), s.output());
      return;
    }
    int q = item.sequences()[0];
    math.attend(run(s, q, item.first(), item.end() - item.first(), item.head(), item.heads()),
        s.query(), s.keyCache(), s.valueCache(), s.output());
  }

  /** Query tokens [first, first + queries) of sequence q, heads [h, h + heads). */
  private RowAttention.QueryRun run(PagedAttentionStep s, int q, int first, int queries, int h,
      int heads) {
    long queryRow = (long) numHeads * headSize * Float.BYTES;
    return new RowAttention.QueryRun(
        first * queryRow + (long) h * headSize * Float.BYTES, queryRow, queries,
        s.pastLens()[q] + first - s.cuSeqlens()[q] + 1, s.blockTables(), q * s.maxBlocks(),
        s.blockSize(), kvHeads * kv.headRowBytes(headSize), kv.headRowBytes(headSize), h, heads,
        numHeads / kvHeads, headSize, scale, rule);
  }

  @Override
  public String toString() {
    return "PagedAttentionKernel[heads " + numHeads + ", kv heads " + kvHeads + ", head size "
        + headSize + ", scale " + scale + ", " + rule + ", " + kv.settingName() + " cache, "
        + math.getClass().getSimpleName() + "]";
  }
}
