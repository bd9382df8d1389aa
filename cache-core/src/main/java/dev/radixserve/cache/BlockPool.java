package dev.radixserve.cache;

import java.util.BitSet;

/**
 * A fixed number of KV blocks with ids {@code [0, total)}: a free set plus accounting. It holds
 * ids only; the KV data lives wherever the model runtime keeps its pool.
 *
 * <p><b>Allocation keeps a sequence's blocks next to each other</b>, and its order is
 * deterministic: {@link #allocate(int, int)} first continues right after the sequence's last
 * block while those ids are free, then takes the lowest run of free ids long enough for the rest
 * (first fit, among the first {@value #RUNS_SCANNED} free runs), and only when there is none the
 * lowest free ids one by one. A fresh pool therefore hands out {@code 0, 1, 2, ...}. Why: the
 * runtime's attention reads each sequence's blocks in table order; when they are adjacent in the
 * pool the hardware prefetcher follows one stream across block boundaries, and when they are
 * scattered it starts again at every block (measured on the CPU kernel: 25-35 % more read
 * bandwidth, docs/benchmarks/journal/2026-11-21-to-28.md). Blocks freed to the pool carry no cache value (the tree has already
 * given them up), so which one is reused first matters only for this layout.
 *
 * <p>A bit set of free ids: an allocation scans it by words ({@code nextSetBit} / {@code
 * nextClearBit}, at most {@value #RUNS_SCANNED} runs), a free is O(1) per block.
 * Single-threaded by contract, like {@link PrefixCache}.
 */
public final class BlockPool {

  /** Free runs {@link #allocate(int, int)} looks through for one long enough. */
  static final int RUNS_SCANNED = 1024;

  private final int total;
  private final BitSet free;
  private int freeCount;

  /** @throws IllegalArgumentException if {@code total < 1} */
  public BlockPool(int total) {
    if (total < 1) {
      throw new IllegalArgumentException("a block pool needs at least 1 block, got " + total);
    }
    this.total = total;
    this.free = new BitSet(total);
    free.set(0, total);
    this.freeCount = total;
  }

  /** Number of blocks, free or not. */
  public int total() {
    return total;
  }

  /** Blocks available to {@link #allocate(int)}. */
  public int freeCount() {
    return freeCount;
  }

  /** Whether {@code allocate(n)} would succeed. */
  public boolean canAllocate(int n) {
    return n >= 0 && n <= freeCount;
  }

  /** Whether {@code id} is free. */
  public boolean isFree(int id) {
    checkRange(id);
    return free.get(id);
  }

  /** Takes {@code n} blocks for a new sequence: {@link #allocate(int, int)} with no last block. */
  public int[] allocate(int n) {
    return allocate(n, -1);
  }

  /**
   * Takes {@code n} blocks, all or nothing, for a sequence whose last block is {@code after}
   * ({@code -1}: none yet), in the order of the class comment.
   *
   * @throws IllegalArgumentException if {@code n < 0} or {@code after} is outside
   *     {@code [-1, total)}
   * @throws IllegalStateException if fewer than {@code n} blocks are free ("need n blocks, m
   *     free"); callers check {@link #canAllocate(int)} first, evicting if short
   */
  public int[] allocate(int n, int after) {
    if (n < 0) {
      throw new IllegalArgumentException("cannot allocate " + n + " blocks");
    }
    if (after != -1) {
      checkRange(after);
    }
    if (n > freeCount) {
      throw new IllegalStateException("need " + n + " blocks, " + freeCount + " free");
    }
    int[] ids = new int[n];
    int got = 0;
    for (int id = after + 1; after >= 0 && got < n && id < total && free.get(id); id++) {
      ids[got++] = take(id);
    }
    int run = firstRun(n - got);
    for (int id = run; run >= 0 && got < n; id++) {
      ids[got++] = take(id);
    }
    for (int id = free.nextSetBit(0); got < n; id = free.nextSetBit(id + 1)) {
      ids[got++] = take(id);
    }
    return ids;
  }

  /**
   * The lowest id starting {@code length} free ids in a row among the first {@link #RUNS_SCANNED}
   * free runs, or -1. The bound keeps an allocation cheap in a large, badly fragmented pool,
   * where a run long enough is unlikely anyway; the caller then takes the lowest free ids.
   */
  private int firstRun(int length) {
    if (length == 0) {
      return -1;
    }
    int scanned = 0;
    for (int start = free.nextSetBit(0); start >= 0 && scanned++ < RUNS_SCANNED; ) {
      int end = free.nextClearBit(start); // total when the run reaches the end
      if (end - start >= length) {
        return start;
      }
      start = end < total ? free.nextSetBit(end) : -1;
    }
    return -1;
  }

  private int take(int id) {
    free.clear(id);
    freeCount--;
    return id;
  }

  /**
   * Returns one block to the pool.
   *
   * @throws IllegalArgumentException if {@code id} is outside {@code [0, total)}
   * @throws IllegalStateException if the block is already free
   */
  public void free(int id) {
    checkRange(id);
    if (free.get(id)) {
      throw new IllegalStateException(
          "block " + id + " freed twice: already free (" + freeCount + " of " + total + " free)");
    }
    free.set(id);
    freeCount++;
  }

  /**
   * Returns blocks to the pool, all or nothing: when one id is bad (out of range, already free,
   * or twice in the array) nothing is freed.
   *
   * @throws IllegalArgumentException if an id is outside {@code [0, total)}
   * @throws IllegalStateException if an id is already free or appears twice
   */
  public void free(int[] ids) {
    int done = 0;
    try {
      for (int id : ids) {
        free(id);
        done++;
      }
    } catch (RuntimeException e) {
      for (int i = 0; i < done; i++) { // roll back the ids freed so far
        take(ids[i]);
      }
      throw e;
    }
  }

  /**
   * Checks that the free count matches the free set.
   *
   * @throws IllegalStateException naming both
   */
  public void checkIntegrity() {
    if (free.cardinality() != freeCount) {
      throw new IllegalStateException("free count says " + freeCount + " blocks are free but "
          + free.cardinality() + " are marked free");
    }
  }

  private void checkRange(int id) {
    if (id < 0 || id >= total) {
      throw new IllegalArgumentException("block id " + id + " out of range [0, " + total + ")");
    }
  }

  @Override
  public String toString() {
    return "BlockPool[" + freeCount + " of " + total + " free]";
  }
}
