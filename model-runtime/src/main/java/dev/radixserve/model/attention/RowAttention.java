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
      Scratch s = MINE.get();
      int scores = run.queries() * run.lastLen();
      if (s.scores.length < scores) {
        s.scores = new float[Math.max(scores, s.scores.length * 2)];
      }
      if (s.max.length < run.queries()) {
        s.max = new float[run.queries()];
      }
      if (s.acc.length < run.queries() * run.headSize()) {
        s.acc = new float[run.queries() * run.headSize()];
      }
      return s;
    }
  }
}
