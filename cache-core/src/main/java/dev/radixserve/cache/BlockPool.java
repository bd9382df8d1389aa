package dev.radixserve.cache;

import java.util.Arrays;
import java.util.BitSet;

/**
 * A fixed number of KV blocks with ids {@code [0, total)}: a free list plus accounting. It holds
 * ids only; the KV data lives wherever the model runtime keeps its pool.
 *
 * <p><b>Allocation order is deterministic</b>: the free list is a stack. A fresh pool hands out
 * {@code 0, 1, 2, ...} in ascending order; a freed block goes on top and is handed out next
 * (last freed, first reused), and {@link #free(int[])} pushes its ids in array order, so the
 * last id of the array is reused first. Blocks freed to the pool carry no cache value (the tree
 * has already given them up), so reusing the most recent one costs nothing and keeps the
 * working set small.
 *
 * <p>O(1) per block: an int stack for the free list, a bit set for the double-free check.
 * Single-threaded by contract, like {@link PrefixCache}.
 */
public final class BlockPool {

  private final int total;
  /** Free ids; {@code stack[0, top)} are free, the next allocation takes {@code stack[top - 1]}. */
  private final int[] stack;
  private int top;
  private final BitSet free;

  /** @throws IllegalArgumentException if {@code total < 1} */
  public BlockPool(int total) {
    if (total < 1) {
      throw new IllegalArgumentException("a block pool needs at least 1 block, got " + total);
    }
    this.total = total;
    this.stack = new int[total];
    for (int i = 0; i < total; i++) {
      stack[i] = total - 1 - i; // block 0 on top: a fresh pool allocates 0, 1, 2, ...
    }
    this.top = total;
    this.free = new BitSet(total);
    free.set(0, total);
  }

  /** Number of blocks, free or not. */
  public int total() {
    return total;
  }

  /** Blocks available to {@link #allocate(int)}. */
  public int freeCount() {
    return top;
  }

  /** Whether {@code allocate(n)} would succeed. */
  public boolean canAllocate(int n) {
    return n >= 0 && n <= top;
  }

  /** Whether {@code id} is on the free list. */
  public boolean isFree(int id) {
    checkRange(id);
    return free.get(id);
  }

  /**
   * Takes {@code n} blocks, all or nothing, in free-list order (see the class comment).
   *
   * @throws IllegalArgumentException if {@code n < 0}
   * @throws IllegalStateException if fewer than {@code n} blocks are free ("need n blocks, m
   *     free"); callers check {@link #canAllocate(int)} first, evicting if short
   */
  public int[] allocate(int n) {
    if (n < 0) {
      throw new IllegalArgumentException("cannot allocate " + n + " blocks");
    }
    if (n > top) {
      throw new IllegalStateException("need " + n + " blocks, " + top + " free");
    }
    int[] ids = new int[n];
    for (int i = 0; i < n; i++) {
      int id = stack[--top];
      free.clear(id);
      ids[i] = id;
    }
    return ids;
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
          "block " + id + " freed twice: already free (" + top + " of " + total + " free)");
    }
    free.set(id);
    stack[top++] = id;
  }

  /**
   * Returns blocks to the pool, all or nothing: when one id is bad (out of range, already free,
   * or twice in the array) nothing is freed.
   *
   * @throws IllegalArgumentException if an id is outside {@code [0, total)}
   * @throws IllegalStateException if an id is already free or appears twice
   */
  public void free(int[] ids) {
    int pushed = 0;
    try {
      for (int id : ids) {
        free(id);
        pushed++;
      }
    } catch (RuntimeException e) {
      for (; pushed > 0; pushed--) { // roll back: the ids pushed so far sit on top
        free.clear(stack[--top]);
      }
      throw e;
    }
  }

  /**
   * Checks that the free stack and the free bit set describe the same set of ids.
   *
   * @throws IllegalStateException naming the first mismatch
   */
  public void checkIntegrity() {
    if (free.cardinality() != top) {
      throw new IllegalStateException(
          "free list holds " + top + " ids but " + free.cardinality() + " blocks are marked free");
    }
    BitSet seen = new BitSet(total);
    for (int i = 0; i < top; i++) {
      int id = stack[i];
      if (id < 0 || id >= total || !free.get(id) || seen.get(id)) {
        throw new IllegalStateException("free list entry " + i + " (block " + id
            + ") is out of range, not marked free, or listed twice; free ids "
            + Arrays.toString(Arrays.copyOf(stack, top)));
      }
      seen.set(id);
    }
  }

  private void checkRange(int id) {
    if (id < 0 || id >= total) {
      throw new IllegalArgumentException("block id " + id + " out of range [0, " + total + ")");
    }
  }

  @Override
  public String toString() {
    return "BlockPool[" + top + " of " + total + " free]";
  }
}
