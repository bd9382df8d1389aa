package dev.radixserve.model.attention;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The inner loops of the CPU paged attention: a run of consecutive query rows of one sequence, for
 * one or more consecutive heads, against that sequence's positions, read where they lie in the
 * pool.
 *
 * <pre>
 *   query row t of the run (0 <= t < queries) sees positions [from(t), firstLen + t): causal,
 *     and with a window W only the last W of them (from(t) = max(0, firstLen + t - W))
 *   position j: block table[tableOffset + j / B], slot j % B; the key row head i reads at
 *     keyCache byte (block * B + slot) * rowBytes + kvOffset(i)         (likewise the values)
 *   s_tj = cap(scale * q_t · k_j)                                    ({@link ScoreRule#cap})
 *   out_t = softmax(s_t[from(t), len_t)) · V[from(t), len_t)        (fp32, max subtracted first)
 * </pre>
 *
 * Blocks wholly before a row's window are never read, and scratch is indexed from the run's
 * first visible position ({@link QueryRun#lo}), so a windowed run costs its window, not its
 * context.
 *
 * Why a run rather than one row at a time: a prefill chunk's queries share almost all their
 * positions, so an implementation can read each block's key and value rows once for the whole
 * run, from L1, instead of once per query (from L2 at best). A decode step has one query per
 * head, so its run takes every head instead, and the slots are read whole. Implementations are
 * thread-safe; their scratch is per thread.
 */
interface RowAttention {

  void attend(QueryRun run, MemorySegment query, MemorySegment keyCache,
      MemorySegment valueCache, MemorySegment out);

  /**
   * Whether {@link #attendDecodes} reads a block that several of its runs share once for all of
   * them, for this shape: then a decode step's sequences that share blocks (a shared system
   * prompt's requests) are worth one work item for each part of the heads, not one each.
   */
  default boolean sharesDecodeBlocks(int headsPerKv, int headSize) {
    return false;
  }

  /**
   * Runs of one query each (a decode step's sequences), all for the same heads: each as {@link
   * #attend} would, with the same bits. Implementations may take the runs' blocks in another
   * order, so that a block id that several runs' tables hold is read once for all of them.
   */
  default void attendDecodes(QueryRun[] runs, MemorySegment query, MemorySegment keyCache,
      MemorySegment valueCache, MemorySegment out) {
    for (QueryRun run : runs) {
      attend(run, query, keyCache, valueCache, out);
    }
  }

  /**
   * Where a run's rows and positions lie: {@code queries} consecutive query rows of one sequence,
   * for {@code heads} consecutive query heads.
   *
   * @param queryOffset byte offset of the first query row's first head; row t of head i at
   *     {@code queryOffset + t * queryStride + i * headSize * 4}, and likewise in the output
   * @param firstLen positions the first row sees (its own included)
   * @param rowBytes bytes per pool slot (kv heads × {@code kvHeadBytes})
   * @param kvHeadBytes bytes of one kv head's row in the cache ({@link
   *     dev.radixserve.model.graph.KvDtype#headRowBytes}: head size × 4 for fp32)
   * @param firstHead the run's first query head
   * @param heads query heads in the run (a decode step's one row per head is a run of all or
   *     several heads, so that each block is read as whole rows, not one head's slice at a time)
   * @param headsPerKv query heads per kv head (grouped-query attention; 1 for multi-head)
   * @param rule the window and the soft cap
   */
  record QueryRun(long queryOffset, long queryStride, int queries, int firstLen, int[] table,
      int tableOffset, int blockSize, long rowBytes, long kvHeadBytes, int firstHead, int heads,
      int headsPerKv,
      int headSize, float scale, ScoreRule rule) {

    int lastLen() {
      return firstLen + queries - 1;
    }

    /** The first position row t sees. */
    int from(int t) {
      return rule.from(firstLen + t);
    }

    /** The first position any row of the run sees (row 0's): scratch index 0. */
    int lo() {
      return from(0);
    }

    /** Positions from {@link #lo} to the last row's end: the scratch row length. */
    int width() {
      return lastLen() - lo();
    }

    /** Bytes of one head's row of queries (and outputs). */
    long headBytes() {
      return (long) headSize * Float.BYTES;
    }

    /** Byte offset of block {@code b}'s first slot (add {@link #kvOffset} for a head). */
    long blockBase(int b) {
      return (long) table[tableOffset + b] * blockSize * rowBytes;
    }

    /** Byte offset, inside a slot, of the kv head that query head {@code i} of the run reads. */
    long kvOffset(int i) {
      return (long) ((firstHead + i) / headsPerKv) * kvHeadBytes;
    }

    /** Whether every head of the run reads the same kv head (grouped-query attention). */
    boolean oneKvHead() {
      return firstHead / headsPerKv == (firstHead + heads - 1) / headsPerKv;
    }

    /** Head {@code i} of the run as a run of its own (same rows, same positions). */
    QueryRun head(int i) {
      return new QueryRun(queryOffset + i * headBytes(), queryStride, queries, firstLen, table,
          tableOffset, blockSize, rowBytes, kvHeadBytes, firstHead + i, 1, headsPerKv, headSize,
          scale, rule);
    }
  }

  /**
   * The Vector API implementation when {@code jdk.incubator.vector} is present, else scalar, for
   * caches of {@code kv}.
   */
  static RowAttention best() {
    return best(dev.radixserve.model.graph.KvDtype.FLOAT32);
  }

  static RowAttention best(dev.radixserve.model.graph.KvDtype kv) {
    return VectorSupport.AVAILABLE ? VectorSupport.create(kv) : new ScalarRowAttention(kv);
  }

  /** Whether the JVM was started with {@code --add-modules jdk.incubator.vector}. */
  final class VectorSupport {
    static final boolean AVAILABLE =
        ModuleLayer.boot().findModule("jdk.incubator.vector").isPresent();

    private VectorSupport() {}

    /** Loads the Vector API class only here, so a JVM without the module never links it. */
    static RowAttention create() {
      return create(dev.radixserve.model.graph.KvDtype.FLOAT32);
    }

    static RowAttention create(dev.radixserve.model.graph.KvDtype kv) {
      try {
        return (RowAttention) Class.forName("dev.radixserve.model.attention.VectorRowAttention")
            .getDeclaredConstructor(dev.radixserve.model.graph.KvDtype.class).newInstance(kv);
      } catch (ReflectiveOperationException e) {
        throw new IllegalStateException("cannot load the Vector API attention", e);
      }
    }
  }

  /**
   * Per-thread scratch: scores [heads × queries × width] (position j of row r at
   * {@code r * width + j - lo}), per-row maxima, output accumulators (row r = head i × queries +
   * query t).
   */
  final class Scratch {
    private static final ThreadLocal<Scratch> MINE = ThreadLocal.withInitial(Scratch::new);

    float[] scores = new float[4096];
    float[] max = new float[64];
    float[] acc = new float[1024];
    long[] slots = new long[1024];
    /** The run's query rows (row r at r × head size) and a block's rows, for the tiled loops. */
    private float[] queries = new float[64 * 128];
    private float[] block = new float[16 * 128];

    /** The run's query rows, row r = head i × queries + query t at {@code r * headSize}. */
    float[] queries(QueryRun run, MemorySegment query) {
      return queries(run, query, 0);
    }

    /**
     * The run's query rows from row {@code first} on: row first + r (r = head i × queries +
     * query t) at {@code (first + r) * headSize}; {@link #get} sized the scratch to hold them.
     */
    float[] queries(QueryRun run, MemorySegment query, int first) {
      int hd = run.headSize();
      for (int i = 0; i < run.heads(); i++) {
        for (int t = 0; t < run.queries(); t++) {
          MemorySegment.copy(query, java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED,
              run.queryOffset() + i * run.headBytes() + t * run.queryStride(), queries,
              (first + i * run.queries() + t) * hd, hd);
        }
      }
      return queries;
    }

    /** {@link VectorRowAttention}'s walk of a decode step's blocks, as ints. */
    int[] walk = new int[1024];

    /** {@link #walk}, grown to hold {@code ints}. */
    int[] walk(int ints) {
      if (walk.length < ints) {
        walk = new int[Math.max(ints, walk.length * 2)];
      }
      return walk;
    }

    /** Room for {@code floats} floats of a block's rows. */
    float[] block(int floats) {
      if (block.length < floats) {
        block = new float[floats];
      }
      return block;
    }
    /** Head rows of a non-fp32 pool converted to fp32 ({@link #converted}). */
    private MemorySegment converted = Arena.ofAuto().allocate(64L * 64 * Float.BYTES, 64);

    /**
     * Native memory for {@code floats} converted floats: native, as the pool, so that the fp32
     * loads in the kernel's loops see one kind of segment.
     */
    MemorySegment converted(int floats) {
      if (converted.byteSize() < (long) floats * Float.BYTES) {
        converted = Arena.ofAuto().allocate((long) floats * Float.BYTES, 64);
      }
      return converted;
    }

    /** This thread's scratch, grown to fit the run. */
    static Scratch get(QueryRun run) {
      int rows = run.heads() * run.queries();
      return get(rows, rows * run.width(), run.headSize());
    }

    /**
     * This thread's scratch, grown to fit {@code rows} rows of {@code headSize}-float queries and
     * accumulators and {@code scores} scores in all.
     */
    static Scratch get(int rows, int scores, int headSize) {
      Scratch s = MINE.get();
      // 8 floats of slack: a masked vector store of a last row's scores (TiledScores) then never
      // reaches past the array, which would take the Vector API's slow path (boxed vectors)
      scores += 8;
      if (s.scores.length < scores) {
        s.scores = new float[Math.max(scores, s.scores.length * 2)];
      }
      if (s.max.length < rows) {
        s.max = new float[rows];
      }
      if (s.acc.length < rows * headSize) {
        s.acc = new float[rows * headSize];
      }
      if (s.queries.length < rows * headSize) {
        s.queries = new float[rows * headSize];
      }
      return s;
    }

    /**
     * The byte offset of the slot of every position the run's first row sees (position j at
     * {@code j - lo}), without a head's offset: the one-query loops walk these in order.
     */
    long[] slots(QueryRun run) {
      int lo = run.lo();
      int len = run.firstLen();
      if (slots.length < len - lo) {
        slots = new long[Math.max(len - lo, slots.length * 2)];
      }
      for (int j = lo; j < len; j++) {
        slots[j - lo] = run.blockBase(j / run.blockSize())
            + (long) (j % run.blockSize()) * run.rowBytes();
      }
      return slots;
    }
  }
}
