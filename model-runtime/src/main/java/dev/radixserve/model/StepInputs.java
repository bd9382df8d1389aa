package dev.radixserve.model;

import dev.radixserve.model.ort.ElementType;
import dev.radixserve.model.ort.MemoryInfo;
import dev.radixserve.model.ort.OrtValue;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;

/**
 * The seven per-step graph inputs in native buffers reused across steps (grown, never shrunk).
 *
 * <pre>
 *   input_ids    int64 [T]      positions   int64 [T]      (sequence after sequence; a long-context
 *                                                          sequence's offset by nPositions)
 *   block_tables int32 [S, M]   M = the batch's longest sequence (past + new) in blocks, padded with 0
 *   cu_seqlens   int32 [S+1]    past_lens   int32 [S]
 *   logits_index int64 [R]      per sequence cu[s+1] - 1, or every token of an all-logits one
 *   attention_metadata int32 [2]  the step's longest new-token run, its longest past + new
 * </pre>
 */
final class StepInputs implements AutoCloseable {

  private Arena arena = Arena.ofShared();
  private MemorySegment ids = MemorySegment.NULL;
  private MemorySegment positions = MemorySegment.NULL;
  private MemorySegment tables = MemorySegment.NULL;
  private MemorySegment cu = MemorySegment.NULL;
  private MemorySegment past = MemorySegment.NULL;
  private MemorySegment logitsIndex = MemorySegment.NULL;
  private final MemorySegment bounds = Arena.ofAuto().allocate(8, 64);
  private int tokens;
  private int seqs;
  private int rows;
  private int maxBlocks;

  /**
   * Fills the buffers from a validated batch.
   *
   * @param longContextOffset added to the positions of a long-context sequence (the model's
   *     nPositions: the long rows of its rotary tables)
   */
  void fill(ForwardBatch batch, int blockSize, int longContextOffset) {
    List<ForwardBatch.Seq> list = batch.seqs();
    seqs = list.size();
    tokens = batch.totalNewTokens();
    rows = batch.logitRows();
    int m = 1;
    for (ForwardBatch.Seq s : list) {
      m = Math.max(m, (s.totalLen() + blockSize - 1) / blockSize);
    }
    maxBlocks = m;
    ensureCapacity();
    int t = 0;
    int r = 0;
    int maxQuery = 0;
    int maxKv = 0;
    for (int i = 0; i < seqs; i++) {
      ForwardBatch.Seq s = list.get(i);
      maxQuery = Math.max(maxQuery, s.newTokens().length);
      maxKv = Math.max(maxKv, s.totalLen());
      cu.setAtIndex(ValueLayout.JAVA_INT, i, t);
      past.setAtIndex(ValueLayout.JAVA_INT, i, s.pastLen());
      int blocks = (s.totalLen() + blockSize - 1) / blockSize;
      long row = (long) i * maxBlocks;
      for (int b = 0; b < maxBlocks; b++) {
        tables.setAtIndex(ValueLayout.JAVA_INT, row + b, b < blocks ? s.blockTable()[b] : 0);
      }
      int[] newTokens = s.newTokens();
      long offset = s.longContext() ? longContextOffset : 0;
      for (int k = 0; k < newTokens.length; k++) {
        ids.setAtIndex(ValueLayout.JAVA_LONG, t + k, newTokens[k]);
        positions.setAtIndex(ValueLayout.JAVA_LONG, t + k, offset + s.pastLen() + k);
      }
      for (int k = s.allLogits() ? 0 : newTokens.length - 1; k < newTokens.length; k++) {
        logitsIndex.setAtIndex(ValueLayout.JAVA_LONG, r++, t + k);
      }
      t += newTokens.length;
    }
    cu.setAtIndex(ValueLayout.JAVA_INT, seqs, t);
    bounds.setAtIndex(ValueLayout.JAVA_INT, 0, maxQuery);
    bounds.setAtIndex(ValueLayout.JAVA_INT, 1, maxKv);
  }

  /** Bytes of the step inputs last filled (what goes up to a device per step). */
  long bytes() {
    return tokens * 16L + (long) seqs * maxBlocks * 4 + (seqs + 1) * 4L + seqs * 4L + rows * 8L
        + bounds.byteSize();
  }

  /** Tensors over the filled buffers, in {@code PagedGraph.stepInputNames()} order. */
  OrtValue[] values(MemoryInfo info) {
    return new OrtValue[] {
        OrtValue.wrap(info, ids.asSlice(0, tokens * 8L), ElementType.INT64, tokens),
        OrtValue.wrap(info, positions.asSlice(0, tokens * 8L), ElementType.INT64, tokens),
        OrtValue.wrap(info, tables.asSlice(0, (long) seqs * maxBlocks * 4), ElementType.INT32,
            seqs, maxBlocks),
        OrtValue.wrap(info, cu.asSlice(0, (seqs + 1) * 4L), ElementType.INT32, seqs + 1),
        OrtValue.wrap(info, past.asSlice(0, seqs * 4L), ElementType.INT32, seqs),
        OrtValue.wrap(info, logitsIndex.asSlice(0, rows * 8L), ElementType.INT64, rows),
        OrtValue.wrap(info, bounds, ElementType.INT32, 2),
    };
  }

  private void ensureCapacity() {
    long needTables = (long) seqs * maxBlocks * 4;
    if (ids.byteSize() >= tokens * 8L && cu.byteSize() >= (seqs + 1) * 4L
        && tables.byteSize() >= needTables && logitsIndex.byteSize() >= rows * 8L) {
      return;
    }
    // Grow geometrically so a growing batch reallocates O(log n) times.
    long t = Math.max(64, Long.highestOneBit(Math.max(1, tokens)) * 2);
    long s = Math.max(16, Long.highestOneBit(Math.max(1, seqs + 1)) * 2);
    long tb = Math.max(256, Long.highestOneBit(Math.max(1, needTables)) * 2);
    arena.close();
    arena = Arena.ofShared();
    ids = arena.allocate(t * 8, 64);
    positions = arena.allocate(t * 8, 64);
    tables = arena.allocate(tb, 64);
    cu = arena.allocate(s * 4, 64);
    past = arena.allocate(s * 4, 64);
    logitsIndex = arena.allocate(t * 8, 64); // rows <= tokens
  }

  @Override
  public void close() {
    if (arena.scope().isAlive()) {
      arena.close();
    }
  }
}
