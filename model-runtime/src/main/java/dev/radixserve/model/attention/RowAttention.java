package dev.radixserve.model.attention;

import java.lang.foreign.MemorySegment;

/**
 * The inner loops of the CPU paged attention: a run of consecutive query rows of one sequence and
 * one head against that sequence's positions, read where they lie in the pool.
 *
 * <pre>
 *   query row t of the run (0 <= t < queries) sees positions [0, firstLen + t)   (causal)
 *   position j: block table[tableOffset + j / B], slot j % B; its key row for this head at
 *     keyCache byte (block * B + slot) * rowBytes + headOffset         (likewise the values)
 *   out_t = softmax(scale * q_t · K[0, len_t)) · V[0, len_t)        (fp32, max subtracted first)
 * </pre>
 *
 * Why a run rather than one row at a time: a prefill chunk's queries share almost all their
 * positions, so an implementation can read each block's key and value rows once for the whole
 * run, from L1, instead of once per query (from L2 at best). Implementations are thread-safe;
 * their scratch is per thread.
 */
interface RowAttention {

  void attend(QueryRun run, MemorySegment query, MemorySegment keyCache,
      MemorySegment valueCache, MemorySegment out);

  /**
   * One query row against its sequence for several heads at once: {@code runs} are those heads'
   * one-query runs over the same positions (a decode step). Each head's output is bit for bit
   * what {@link #attend} gives it alone; an implementation may interleave the heads so that each
   * block of the pool is read once for all of them, front to back (a decode step's keys and
   * values come from memory, and a head's 64 floats every 3 KB is a poor stream to prefetch).
   * The default runs the heads one by one.
   */
  default void attendHeads(QueryRun[] runs, MemorySegment query, MemorySegment keyCache,
      MemorySegment valueCache, MemorySegment out) {
    for (QueryRun run : runs) {
      attend(run, query, keyCache, valueCache, out);
    }
  }

  /**
   * Where a run's rows and positions lie.
   *
   * @param queryOffset byte offset of the first query row's head; row t at
   *     {@code queryOffset + t * queryStride}, and likewise in the output
   * @param firstLen positions the first row sees (its own included)
   * @param rowBytes bytes per pool slot (kv heads × head size × 4)
   * @param headOffset byte offset of this head's kv head inside a slot
   */
  record QueryRun(long queryOffset, long queryStride, int queries, int firstLen, int[] table,
      int tableOffset, int blockSize, long rowBytes, long headOffset, int headSize,
      float scale) {

    int lastLen() {
      return firstLen + queries - 1;
    }

    /** Byte offset of block {@code b}'s first slot for this head. */
    long blockStart(int b) {
      return (long) table[tableOffset + b] * blockSize * rowBytes + headOffset;
    }
  }

  /** The Vector API implementation when {@code jdk.incubator.vector} is present, else scalar. */
  static RowAttention best() {
    return VectorSupport.AVAILABLE ? VectorSupport.create() : new ScalarRowAttention();
  }

  /** Whether the JVM was started with {@code --add-modules jdk.incubator.vector}. */
  final class VectorSupport {
    static final boolean AVAILABLE =
        ModuleLayer.boot().findModule("jdk.incubator.vector").isPresent();

    private VectorSupport() {}

    /** Loads the Vector API class only here, so a JVM without the module never links it. */
    static RowAttention create() {
      try {
        return (RowAttention) Class.forName("dev.radixserve.model.attention.VectorRowAttention")
            .getDeclaredConstructor().newInstance();
      } catch (ReflectiveOperationException e) {
        throw new IllegalStateException("cannot load the Vector API attention", e);
      }
    }
  }

  /** Per-thread scratch: scores [queries × lastLen], per-row maxima, output accumulators. */
  final class Scratch {
    private static final ThreadLocal<Scratch> MINE = ThreadLocal.withInitial(Scratch::new);

    float[] scores = new float[4096];
    float[] max = new float[64];
    float[] acc = new float[1024];

    /** This thread's scratch, grown to fit the run. */
    static Scratch get(QueryRun run) {
      return get(run.queries(), run.lastLen(), run.headSize());
    }

    /** This thread's scratch, grown to fit {@code rows} rows of {@code len} scores each. */
    static Scratch get(int rows, int len, int headSize) {
      Scratch s = MINE.get();
      int scores = rows * len;
      if (s.scores.length < scores) {
        s.scores = new float[Math.max(scores, s.scores.length * 2)];
      }
      if (s.max.length < rows) {
        s.max = new float[rows];
      }
      if (s.acc.length < rows * headSize) {
        s.acc = new float[rows * headSize];
      }
      return s;
    }
  }
}
