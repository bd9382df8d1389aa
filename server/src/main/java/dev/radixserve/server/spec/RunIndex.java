package dev.radixserve.server.spec;

/**
 * Where each run of {@code n} tokens of one sequence last occurred, and whether it occurred more
 * than once: an open-addressing table of positions, 8-16 bytes a run. The table holds no keys:
 * a slot holds the position right after a run, and a lookup checks the sequence's own tokens
 * there, so hash collisions cost a probe and never a wrong answer.
 *
 * <p>Why not a {@code HashMap}: the drafts of {@link PromptLookup} and {@link ShortKeyLookup}
 * index every position of a sequence, prompt included, on the engine thread. As maps of boxed
 * keys they held 373 bytes a position (49 MB for a 128k-token prompt) and took 0.3-0.75 s to
 * index such a prompt at its first decode step, a stall of every sequence in the batch; as
 * tables, 66 bytes and 30-90 ms
 * ({@code DraftIndexHeapBench}, journal 2026-12-03f).
 *
 * <p>The positions must index one growing sequence whose tokens, once indexed, never change
 * (a sequence's committed tokens; drafts are never indexed). Not thread-safe (one per sequence,
 * engine thread).
 */
final class RunIndex {

  /** Set on a slot whose run occurred more than once. */
  private static final int REPEATED = 0x8000_0000;
  private static final int POSITION = ~REPEATED;

  private final int n;
  /** Position right after a run (at least {@code n}, so 0 marks a free slot), flag bit. */
  private int[] slots = new int[16];
  private int size;

  /** @param n tokens in a run */
  RunIndex(int n) {
    if (n < 1) {
      throw new IllegalArgumentException("runs of " + n + " tokens");
    }
    this.n = n;
  }

  /** Records that the run {@code tokens[end - n, end)} occurred there (latest wins). */
  void put(int[] tokens, int end) {
    if (2 * (size + 1) > slots.length) {
      grow(tokens);
    }
    int mask = slots.length - 1;
    for (int i = hash(tokens, end) & mask; ; i = (i + 1) & mask) {
      int slot = slots[i];
      if (slot == 0) {
        slots[i] = end;
        size++;
        return;
      }
      if (sameRun(tokens, slot & POSITION, end)) {
        slots[i] = end | REPEATED;
        return;
      }
    }
  }

  /**
   * The position right after the latest recorded occurrence of the run {@code tokens[at - n,
   * at)}, or -1 where it was not recorded.
   */
  int latest(int[] tokens, int at) {
    int slot = find(tokens, at);
    return slot == 0 ? -1 : slot & POSITION;
  }

  /** As {@link #latest}, but -1 also where the run was recorded more than once. */
  int once(int[] tokens, int at) {
    int slot = find(tokens, at);
    return slot == 0 || (slot & REPEATED) != 0 ? -1 : slot;
  }

  /** Runs recorded (distinct). */
  int size() {
    return size;
  }

  /** Slots allocated: at most 4 per run recorded (twice as many as runs, then doubled). */
  int capacity() {
    return slots.length;
  }

  private int find(int[] tokens, int at) {
    int mask = slots.length - 1;
    for (int i = hash(tokens, at) & mask; ; i = (i + 1) & mask) {
      int slot = slots[i];
      if (slot == 0 || sameRun(tokens, slot & POSITION, at)) {
        return slot;
      }
    }
  }

  private boolean sameRun(int[] tokens, int a, int b) {
    for (int k = 1; k <= n; k++) {
      if (tokens[a - k] != tokens[b - k]) {
        return false;
      }
    }
    return true;
  }

  private int hash(int[] tokens, int end) {
    int h = n;
    for (int k = end - n; k < end; k++) {
      h = h * 0x9E3779B1 + tokens[k];
    }
    // murmur3's finalizer: the low bits index the table
    h ^= h >>> 16;
    h *= 0x85EBCA6B;
    h ^= h >>> 13;
    h *= 0xC2B2AE35;
    return h ^ (h >>> 16);
  }

  private void grow(int[] tokens) {
    int[] old = slots;
    slots = new int[old.length * 2];
    int mask = slots.length - 1;
    for (int slot : old) {
      if (slot != 0) {
        int i = hash(tokens, slot & POSITION) & mask;
        while (slots[i] != 0) {
          i = (i + 1) & mask;
        }
        slots[i] = slot;
      }
    }
  }
}
