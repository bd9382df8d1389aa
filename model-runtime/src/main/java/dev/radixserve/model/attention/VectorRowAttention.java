package dev.radixserve.model.attention;

import static jdk.incubator.vector.FloatVector.fromMemorySegment;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import dev.radixserve.model.graph.KvDtype;
import java.util.Arrays;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;

/**
 * {@link RowAttention} with the Vector API (AVX2/AVX-512/NEON as the CPU has). Loaded only when
 * the JVM has {@code jdk.incubator.vector} ({@link RowAttention#best}).
 *
 * <pre>
 *   scores   for each block b of positions:  for each query row t that sees b:  q_t in registers,
 *            s[t][j] = scale * q_t · k_j for the block's rows j       (the block's 16 key rows
 *            come from memory once and stay in L1 for the rest of the run)
 *   softmax  per row: vectorised exp(s - max), sum
 *   values   for each block b:  for each row t:  acc_t in registers,  acc_t += p[t][j] * v_j
 *   output   out_t = acc_t / sum_t
 * </pre>
 *
 * With 256-bit vectors and a head of whole pairs of vectors (64, 128: every Llama shape), a
 * multi-query run takes the tiled loops instead: {@link TiledScores} (two query rows by four key
 * rows per step, eight scores' lanes summed by one shuffle tree) and {@link TiledValues} (two
 * rows per value load, for heads of whole 8-vector chunks), on heap copies of the run's query
 * rows and of each block's rows (converted once for the run). Per (head, query, position) they
 * do this class's per-pair operations in the same order: the same bits, 1.5-2x faster
 * (docs/benchmarks/journal/2026-11-28d-prefill-attention.md).
 *
 * A run of one query (a decode step) takes every head of the run at once and goes position by
 * position instead: for each slot j, for each head i, s[i][j] = scale * q_i · k_j, and later
 * acc_i += p[i][j] * v_j. The pool is then read slot after slot, whole rows in address order,
 * which the hardware prefetchers follow at the memory's bandwidth; one head's 256-byte slice of
 * every 3 KB row was read at about half of it (docs/benchmarks/journal/2026-11-21-to-28.md, "Decode attention reads whole
 * slots"). Each (head, slot) pair does the very operations, in the same order, that the blocked
 * loops do, so a token gives the same bits as a decode step and inside a prefill run.
 *
 * With a sliding window ({@link ScoreRule}) the loops start at the block holding the run's first
 * visible position and each row at its own window's start, so blocks before the window are never
 * read; a decode step's slot walk starts there too. The same (head, slot) operations in the same
 * order as without a window, so a window covering the context gives full attention's bits.
 *
 * A head of exactly 8 vectors (GPT-2's 64 floats) keeps a query or an accumulator in 8
 * registers; other head sizes take a general loop with a scalar tail. Vectors are capped at 256
 * bits so that a 64-float head is 8 vectors on AVX-512 machines too (the tiles alone go to 512
 * bits there, {@link WideTiles}, with the same bits). Sums across lanes and exp go through {@link
 * StableLanes}, so a step gives the same bits before and after the JIT compiles it.
 *
 * <p>The caches may hold another type than fp32 ({@link KvDtype}): every cache read goes through
 * {@link Rows#convert}, which converts L values of a head row to floats (bf16: a shift; fp16: a
 * power-of-two product; fp8: exponent rebias, with subnormals through an exact integer
 * conversion; int8: a conversion; int8 and fp8 then times the row's scale). The conversions are
 * exact but for that one multiplication, and lane-wise, so the sums keep their order and their
 * bits. A server runs one KV dtype, so only one {@link Rows} class is loaded ({@link Rows#of}) and
 * C2 inlines it.
 *
 * <p>No load or conversion of ours returns a vector (loads are the JDK's {@code
 * fromMemorySegment}, which is annotated to be inlined even past C2's node budget; {@link
 * Rows#convert} stores): a vector that crosses a call C2 leaves out of line is boxed. {@link
 * StableLanes}' sum and exp are the exception, inlined in every compile logged so far. A served 1B decode step (32 query heads,
 * bf16 pool) compiled {@code attendOneQuery} with the softmax and the value loop inlined, ran
 * out of budget at a {@code load(segment, offset)} helper, and allocated ~1 GB/s of boxed
 * vectors in steady state (docs/benchmarks/journal/2026-11-28c-decode-heap.md).
 */
final class VectorRowAttention implements RowAttention {

  /**
   * Narrows the vectors to 128 bits, for tests of that path on wider machines (default: the CPU's
   * width, capped at 256 bits). Fixed per JVM: a static final species is what lets C2 fold it.
   */
  static final String BITS_PROPERTY = "radixserve.attention.vectorBits";
  static final VectorSpecies<Float> SP = Math.min(256, Integer.getInteger(BITS_PROPERTY,
      FloatVector.SPECIES_PREFERRED.vectorBitSize())) >= 256 ? FloatVector.SPECIES_256
          : FloatVector.SPECIES_128;
  static final int L = SP.length();
  static final long VB = (long) L * Float.BYTES;
  static final ByteOrder BO = ByteOrder.nativeOrder();
  private static final ValueLayout.OfFloat F = ValueLayout.JAVA_FLOAT_UNALIGNED;

  /**
   * Blocks per call of the tiled loops, whose setup (array range checks) is paid once a call.
   * 4 was 1.1x faster (8B shape, int8 KV, 4k context) but allocated ~1 MB of boxed vectors per
   * layer, independent of the context (so at each run's causal edge), which we did not find in
   * time; 1 allocates nothing (2026-11-28d journal).
   */
  static final int SPAN_BLOCKS = 1;

  private final Rows kv;
  /**
   * Whether the pool's rows are converted to fp32 before the loops read them. The loops read
   * fp32 only: a conversion inlined into their 8 loads (fp16's above all) took them past C2's
   * node budget, the last loads stayed calls and every vector crossing one was boxed (JFR: most
   * of a serving JVM's allocation; fp16 prefill attention at 13x fp32's time, int8 at 7x). A
   * block's rows are converted once for all the run's query rows, a decode slot's row once for
   * its kv group's heads; the values are the same floats as converted in place (every
   * conversion is exact but int8/fp8's one product, done the same way), so the bits are too.
   */
  private final boolean converts;

  /**
   * Whether a decode step of grouped-query heads takes {@link #attendDecodes} (the default
   * where the tiles fit) rather than the slot-by-slot {@link #attendOneQuery}; false only in
   * tests, which check that both give the same bits.
   */
  private final boolean groupedDecode;

  VectorRowAttention(KvDtype dtype) {
    this(dtype, true);
  }

  VectorRowAttention(KvDtype dtype, boolean groupedDecode) {
    this.kv = Rows.of(dtype);
    this.converts = dtype != KvDtype.FLOAT32;
    this.groupedDecode = groupedDecode;
  }

  /** Where a decode step converts one head row, or null to read an fp32 pool in place. */
  private MemorySegment row(Scratch scratch, QueryRun run) {
    return converts ? scratch.converted(run.headSize()) : null;
  }

  /**
   * {@code rows} head rows of {@code headSize} values, {@code rowBytes} apart in the pool from
   * {@code start}, as consecutive fp32 rows of {@code out}.
   */
  private void convert(MemorySegment pool, long start, long rowBytes, int rows, int headSize,
      MemorySegment out) {
    int vecEnd = headSize - headSize % L;
    for (int r = 0; r < rows; r++) {
      long src = start + r * rowBytes;
      long dst = (long) r * headSize * Float.BYTES;
      int d = 0;
      for (; d < vecEnd; d += L) {
        kv.convert(pool, src, d, out, dst + (long) d * Float.BYTES);
      }
      for (; d < headSize; d++) {
        out.set(F, dst + (long) d * Float.BYTES, kv.get(pool, src, d));
      }
    }
  }

  @Override
  public void attend(QueryRun run, MemorySegment query, MemorySegment keyCache,
      MemorySegment valueCache, MemorySegment out) {
    if (run.queries() == 1) {
      if (sharesDecodeBlocks(run.headsPerKv(), run.headSize())) {
        attendDecodes(new QueryRun[] {run}, query, keyCache, valueCache, out);
      } else {
        attendOneQuery(run, query, keyCache, valueCache, out);
      }
      return;
    }
    if (run.oneKvHead()) {
      attendGroup(run, query, keyCache, valueCache, out);
      return;
    }
    for (int i = 0; i < run.heads(); i++) {
      attendGroup(run.head(i), query, keyCache, valueCache, out);
    }
  }

  /**
   * A run of queries for heads that read one kv head (one head, or a grouped-query group): the
   * blocked loops. Each block of a converted pool is converted once for every head and row of
   * the run; per (head, row) the operations and their order are those of a one-head run, so the
   * grouping changes no bits. Row r = head i × queries + query t.
   */
  private void attendGroup(QueryRun run, MemorySegment query, MemorySegment keyCache,
      MemorySegment valueCache, MemorySegment out) {
    Scratch scratch = Scratch.get(run);
    int n = run.queries();
    int rows = run.heads() * n;
    int headSize = run.headSize();
    boolean eight = headSize == 8 * L;
    float[] max = scratch.max;
    Arrays.fill(max, 0, rows, Float.NEGATIVE_INFINITY);
    if (TiledScores.fits(headSize)) {
      tiledScores(run, query, keyCache, scratch.scores, max, scratch);
    } else if (eight) {
      scores8(run, query, keyCache, scratch.scores, max, scratch);
    } else {
      scores(run, query, keyCache, scratch.scores, max, scratch);
    }
    int w = run.width();
    for (int r = 0; r < rows; r++) {
      // from here on max[r] holds the row's normaliser
      int t = r % n;
      int from = run.from(t);
      max[r] = 1f / exp(scratch.scores, r * w + from - run.lo(), run.firstLen() + t - from,
          max[r]);
    }
    float[] acc = scratch.acc;
    Arrays.fill(acc, 0, rows * headSize, 0f);
    if (TiledValues.fits(headSize)) {
      tiledValues(run, valueCache, scratch.scores, acc, scratch);
    } else if (eight) {
      values8(run, valueCache, scratch.scores, acc, scratch);
    } else {
      values(run, valueCache, scratch.scores, acc, scratch);
    }
    for (int r = 0; r < rows; r++) {
      writeRow(acc, r * headSize, max[r], out, run.queryOffset() + (r / n) * run.headBytes()
          + (r % n) * run.queryStride(), headSize);
    }
  }

  /**
   * One query row of each of the run's heads: slot by slot, every head at each slot. The score
   * and value loops stay separate methods (as {@link #scores8} and {@link #values8}): in one
   * method C2 ran out of inlining budget, left vector helpers as calls and boxed their vectors,
   * which made this path slower than the per-head one it replaces.
   */
  private void attendOneQuery(QueryRun run, MemorySegment query, MemorySegment keyCache,
      MemorySegment valueCache, MemorySegment out) {
    Scratch scratch = Scratch.get(run);
    int heads = run.heads();
    int len = run.width(); // positions seen: [lo, firstLen)
    int headSize = run.headSize();
    boolean eight = headSize == 8 * L;
    long[] slots = scratch.slots(run);
    float[] max = scratch.max;
    Arrays.fill(max, 0, heads, Float.NEGATIVE_INFINITY);
    if (eight) {
      scoresOneQuery8(run, slots, query, keyCache, scratch.scores, max, row(scratch, run));
    } else {
      scoresOneQuery(run, slots, query, keyCache, scratch.scores, max, row(scratch, run));
    }
    for (int i = 0; i < heads; i++) {
      max[i] = 1f / exp(scratch.scores, i * len, len, max[i]);
    }
    float[] acc = scratch.acc;
    Arrays.fill(acc, 0, heads * headSize, 0f);
    if (eight) {
      valuesOneQuery8(run, slots, valueCache, scratch.scores, acc, row(scratch, run));
    } else {
      valuesOneQuery(run, slots, valueCache, scratch.scores, acc, row(scratch, run));
    }
    for (int i = 0; i < heads; i++) {
      writeRow(acc, i * headSize, max[i], out, run.queryOffset() + i * run.headBytes(),
          headSize);
    }
  }

  @Override
  public boolean sharesDecodeBlocks(int headsPerKv, int headSize) {
    return groupedDecode && headsPerKv > 1 && TiledScores.fits(headSize)
        && TiledValues.fits(headSize);
  }

  /**
   * Decode steps of grouped-query heads ({@link #sharesDecodeBlocks}), block by block: each kv
   * head's rows of a block are copied (converted) to the heap once, for every run whose table
   * holds that block at that index and for the query heads of the kv group, which take them as
   * the rows of a tile, two heads at a time ({@link TiledScores#pairs}, {@link
   * TiledValues#pair}), as a prefill run's rows do. Each run still sees its own positions,
   * ascending; per (run, head, position) the operations and their order are {@link
   * #attendOneQuery}'s, so the bits are too.
   *
   * <p>Why: the slot-by-slot loop loads the query and the key row for every (head, slot), two
   * loads per fma, through segment loads whose bounds and scope checks C2 keeps, and converts a
   * block once per sequence. In a served 4-sequence decode step of the 1B shape (bf16 pool,
   * shared system prompt) that loop, its conversions and its value loop were most of the Java
   * samples (JFR, docs/benchmarks/journal/2026-11-30-grouped-decode.md). Runs arrive sorted by
   * their tables, so runs that share a block are adjacent and its conversion is reused.
   */
  @Override
  public void attendDecodes(QueryRun[] runs, MemorySegment query, MemorySegment keyCache,
      MemorySegment valueCache, MemorySegment out) {
    int n = runs.length;
    int heads = runs[0].heads();
    int hd = runs[0].headSize();
    int[] scoreAt = new int[n + 1]; // run m's head i: scores from scoreAt[m] + i * width
    for (int m = 0; m < n; m++) {
      scoreAt[m + 1] = scoreAt[m] + heads * runs[m].width();
    }
    Scratch scratch = Scratch.get(n * heads, scoreAt[n], hd);
    float[] queries = null;
    for (int m = 0; m < n; m++) {
      queries = scratch.queries(runs[m], query, m * heads);
    }
    float[] max = scratch.max;
    Arrays.fill(max, 0, n * heads, Float.NEGATIVE_INFINITY);
    decodeWalk(runs, scratch);
    decodeScores(runs, queries, keyCache, scratch.scores, scoreAt, max, scratch);
    for (int m = 0; m < n; m++) {
      int w = runs[m].width();
      for (int i = 0; i < heads; i++) {
        int r = m * heads + i;
        max[r] = 1f / exp(scratch.scores, scoreAt[m] + i * w, w, max[r]);
      }
    }
    float[] acc = scratch.acc;
    Arrays.fill(acc, 0, n * heads * hd, 0f);
    decodeValues(runs, valueCache, scratch.scores, scoreAt, acc, scratch);
    for (int m = 0; m < n; m++) {
      QueryRun run = runs[m];
      for (int i = 0; i < heads; i++) {
        int r = m * heads + i;
        writeRow(acc, r * hd, max[r], out, run.queryOffset() + i * run.headBytes(), hd);
      }
    }
  }

  /**
   * {@link #attendDecodes}' scores, along {@link #decodeWalk}'s steps. Its own method, as the
   * values: in one method with both, C2 inlined two tile loops, ran out of node budget and boxed
   * vectors (KernelBench: ~60-90 KB a layer).
   */
  private void decodeScores(QueryRun[] runs, float[] queries, MemorySegment pool,
      float[] scores, int[] scoreAt, float[] max, Scratch scratch) {
    int heads = runs[0].heads();
    int hd = runs[0].headSize();
    float[] keys = scratch.block(runs[0].blockSize() * hd);
    int[] walk = scratch.walk;
    for (int e = 0; walk[e] >= 0; e += WALK_STEP) {
      QueryRun run = take(walk, e, runs, pool, keys, scratch);
      int m = walk[e];
      int base = scoreAt[m] - run.lo();
      int i = walk[e + 1];
      for (; i + 1 < walk[e + 5]; i += 2) {
        TiledScores.pairs(run, queries, (m * heads + i) * hd, keys, walk[e + 6], walk[e + 3],
            walk[e + 4], scores, base + i * run.width(), max, m * heads + i);
      }
      if (i < walk[e + 5]) {
        TiledScores.row(run, queries, (m * heads + i) * hd, keys, walk[e + 6], walk[e + 3],
            walk[e + 4], scores, base + i * run.width(), max, m * heads + i);
      }
    }
  }

  /** {@link #attendDecodes}' weighted value sums, along the same walk. */
  private void decodeValues(QueryRun[] runs, MemorySegment pool, float[] p, int[] scoreAt,
      float[] acc, Scratch scratch) {
    int heads = runs[0].heads();
    int hd = runs[0].headSize();
    float[] values = scratch.block(runs[0].blockSize() * hd);
    int[] walk = scratch.walk;
    for (int e = 0; walk[e] >= 0; e += WALK_STEP) {
      QueryRun run = take(walk, e, runs, pool, values, scratch);
      int m = walk[e];
      int w = run.width();
      int base = scoreAt[m] - run.lo();
      int i = walk[e + 1];
      for (; i + 1 < walk[e + 5]; i += 2) {
        for (int d = 0; d < hd; d += 8 * L) {
          TiledValues.pair(p, base + i * w, base + (i + 1) * w, values, walk[e + 6] + d,
              walk[e + 3], walk[e + 4], acc, (m * heads + i) * hd + d, hd);
        }
      }
      if (i < walk[e + 5]) {
        TiledValues.row(p, base + i * w, values, walk[e + 6], walk[e + 3], walk[e + 4], acc,
            (m * heads + i) * hd, hd);
      }
    }
  }

  /** Ints per step of {@link #decodeWalk}. */
  private static final int WALK_STEP = 8;

  /**
   * Writes into {@code scratch.walk} the steps both passes of {@link #attendDecodes} take, ended
   * by a -1: for each table index b (ascending), each kv group (its first run head g), each run
   * m that sees positions [from, to) of that block: {m, g, b, from, to, end of the group's heads,
   * -b * blockSize * headSize (the block's rows' offset as the tiles take it), copy}. copy is 1
   * where the heap rows must be filled for this step, 0 where the step before left them holding
   * this block id and kv head, as many rows or more: the runs come sorted by table, so runs
   * sharing a block are adjacent and read it once.
   */
  private static void decodeWalk(QueryRun[] runs, Scratch scratch) {
    QueryRun first = runs[0];
    int bs = first.blockSize();
    int blocks = 0;
    int start = Integer.MAX_VALUE;
    for (QueryRun run : runs) {
      blocks = Math.max(blocks, (run.firstLen() + bs - 1) / bs);
      start = Math.min(start, firstBlock(run));
    }
    int[] walk = scratch.walk(WALK_STEP * (blocks - start) * first.heads() * runs.length + 1);
    int e = 0;
    for (int b = start, j0 = b * bs; b < blocks; b++, j0 += bs) {
      for (int g = 0; g < first.heads(); g = nextGroup(first, g)) {
        long held = -1; // block id * (bs + 1) + rows
        for (int m = 0; m < runs.length; m++) {
          QueryRun run = runs[m];
          int from = Math.max(j0, run.lo());
          int to = Math.min(j0 + bs, run.firstLen());
          if (from >= to) {
            continue;
          }
          long id = run.table()[run.tableOffset() + b];
          boolean copy = held < 0 || held / (bs + 1) != id || held % (bs + 1) < to - j0;
          if (copy) {
            held = id * (bs + 1) + to - j0;
          }
          walk[e] = m;
          walk[e + 1] = g;
          walk[e + 2] = b;
          walk[e + 3] = from;
          walk[e + 4] = to;
          walk[e + 5] = nextGroup(first, g);
          walk[e + 6] = -j0 * first.headSize();
          walk[e + 7] = copy ? 1 : 0;
          e += WALK_STEP;
        }
      }
    }
    walk[e] = -1;
  }

  /** Step e's run, with the heap rows filled where the step says so. */
  private QueryRun take(int[] walk, int e, QueryRun[] runs, MemorySegment pool, float[] rows,
      Scratch scratch) {
    QueryRun run = runs[walk[e]];
    if (walk[e + 7] != 0) {
      int b = walk[e + 2];
      copyBlock(pool, run.blockBase(b) + run.kvOffset(walk[e + 1]), run,
          walk[e + 4] - b * run.blockSize(), rows, 0, scratch);
    }
    return run;
  }

  /** The first head of the run after head {@code i}'s kv group (or {@code heads}). */
  private static int nextGroup(QueryRun run, int i) {
    int g = run.headsPerKv();
    return Math.min(run.heads(), ((run.firstHead() + i) / g + 1) * g - run.firstHead());
  }

  /** out[o ..] = acc[a ..] * norm, one head's row. */
  private static void writeRow(float[] acc, int a, float norm, MemorySegment out, long o,
      int headSize) {
    int vecEnd = headSize - headSize % L;
    int d = 0;
    for (; d < vecEnd; d += L) {
      FloatVector.fromArray(SP, acc, a + d).mul(norm)
          .intoMemorySegment(out, o + (long) d * Float.BYTES, BO);
    }
    for (; d < headSize; d++) {
      out.set(F, o + (long) d * Float.BYTES, acc[a + d] * norm);
    }
  }

  /** The vector width in bits this JVM's kernel uses (tests). */
  static int vectorBits() {
    return SP.vectorBitSize();
  }

  /** The first row of the run that sees position j0 (row t sees [from(t), firstLen + t)). */
  private static int firstRowSeeing(QueryRun run, int j0) {
    return Math.max(0, j0 - run.firstLen() + 1);
  }

  /**
   * The first block a run reads: the one holding {@link QueryRun#lo}. Blocks before it lie wholly
   * outside every row's window and are never touched.
   */
  private static int firstBlock(QueryRun run) {
    return run.lo() / run.blockSize();
  }

  // ---- head = 8 vectors ----

  private void scores8(QueryRun run, MemorySegment query, MemorySegment pool,
      float[] scores, float[] max, Scratch scratch) {
    int last = run.lastLen();
    int bs = run.blockSize();
    MemorySegment keys = converts ? scratch.converted(bs * 8 * L) : pool;
    long rb = converts ? 8 * VB : run.rowBytes();
    float scale = run.scale();
    int w = run.width();
    ScoreRule rule = run.rule();
    for (int b = firstBlock(run), j0 = b * bs; j0 < last; b++, j0 += bs) {
      long start = run.blockBase(b) + run.kvOffset(0);
      if (converts) {
        convert(pool, start, run.rowBytes(), Math.min(bs, last - j0), 8 * L, keys);
        start = 0;
      }
      for (int i = 0; i < run.heads(); i++) {
        for (int t = firstRowSeeing(run, j0); t < run.queries(); t++) {
          int begin = Math.max(j0, run.from(t));
          if (begin >= j0 + bs) {
            break; // this row's window starts after the block, and so do the later rows'
          }
          int r = i * run.queries() + t;
          long q = run.queryOffset() + i * run.headBytes() + t * run.queryStride();
          FloatVector q0 = fromMemorySegment(SP, query, q, BO);
          FloatVector q1 = fromMemorySegment(SP, query, q + VB, BO);
          FloatVector q2 = fromMemorySegment(SP, query, q + 2 * VB, BO);
          FloatVector q3 = fromMemorySegment(SP, query, q + 3 * VB, BO);
          FloatVector q4 = fromMemorySegment(SP, query, q + 4 * VB, BO);
          FloatVector q5 = fromMemorySegment(SP, query, q + 5 * VB, BO);
          FloatVector q6 = fromMemorySegment(SP, query, q + 6 * VB, BO);
          FloatVector q7 = fromMemorySegment(SP, query, q + 7 * VB, BO);
          int end = Math.min(j0 + bs, run.firstLen() + t);
          int base = r * w - run.lo();
          float m = max[r];
          long k = start + (begin - j0) * rb;
          for (int j = begin; j < end; j++, k += rb) {
            FloatVector a = q0.mul(fromMemorySegment(SP, keys, k, BO));
            FloatVector c = q1.mul(fromMemorySegment(SP, keys, k + VB, BO));
            a = q2.fma(fromMemorySegment(SP, keys, k + 2 * VB, BO), a);
            c = q3.fma(fromMemorySegment(SP, keys, k + 3 * VB, BO), c);
            a = q4.fma(fromMemorySegment(SP, keys, k + 4 * VB, BO), a);
            c = q5.fma(fromMemorySegment(SP, keys, k + 5 * VB, BO), c);
            a = q6.fma(fromMemorySegment(SP, keys, k + 6 * VB, BO), a);
            c = q7.fma(fromMemorySegment(SP, keys, k + 7 * VB, BO), c);
            float s = rule.cap(scale * StableLanes.sum(a.add(c)));
            scores[base + j] = s;
            m = Math.max(m, s);
          }
          max[r] = m;
        }
      }
    }
  }

  private void values8(QueryRun run, MemorySegment pool, float[] p, float[] acc,
      Scratch scratch) {
    int last = run.lastLen();
    int bs = run.blockSize();
    MemorySegment values = converts ? scratch.converted(bs * 8 * L) : pool;
    long rb = converts ? 8 * VB : run.rowBytes();
    int w = run.width();
    for (int b = firstBlock(run), j0 = b * bs; j0 < last; b++, j0 += bs) {
      long start = run.blockBase(b) + run.kvOffset(0);
      if (converts) {
        convert(pool, start, run.rowBytes(), Math.min(bs, last - j0), 8 * L, values);
        start = 0;
      }
      for (int i = 0; i < run.heads(); i++) {
        for (int t = firstRowSeeing(run, j0); t < run.queries(); t++) {
          int begin = Math.max(j0, run.from(t));
          if (begin >= j0 + bs) {
            break;
          }
          int r = i * run.queries() + t;
          valueChunk8(acc, r * 8 * L, p, r * w - run.lo(), begin,
              Math.min(j0 + bs, run.firstLen() + t), values, start + (begin - j0) * rb, 0, rb);
        }
      }
    }
  }

  /**
   * acc[a .. a + 8L) += p[base + j] * v_j for the block's positions j in [j0, end), the 8
   * accumulators in registers; v_j's 8 vectors at {@code v0 + (j - j0) * rowBytes}. Per element
   * the same fmas in the same order as {@link #valuesOneQuery8} and {@link #addWeighted}. {@code
   * d0} is a long for {@link Rows#convert}'s reason.
   */
  private static void valueChunk8(float[] acc, int a, float[] p, int base, int j0, int end,
      MemorySegment values, long v0, long d0, long rowBytes) {
    FloatVector o0 = FloatVector.fromArray(SP, acc, a);
    FloatVector o1 = FloatVector.fromArray(SP, acc, a + L);
    FloatVector o2 = FloatVector.fromArray(SP, acc, a + 2 * L);
    FloatVector o3 = FloatVector.fromArray(SP, acc, a + 3 * L);
    FloatVector o4 = FloatVector.fromArray(SP, acc, a + 4 * L);
    FloatVector o5 = FloatVector.fromArray(SP, acc, a + 5 * L);
    FloatVector o6 = FloatVector.fromArray(SP, acc, a + 6 * L);
    FloatVector o7 = FloatVector.fromArray(SP, acc, a + 7 * L);
    long v = v0;
    for (int j = j0; j < end; j++, v += rowBytes) {
      FloatVector w = FloatVector.broadcast(SP, p[base + j]);
      o0 = w.fma(fromMemorySegment(SP, values, v + (d0) * Float.BYTES, BO), o0);
      o1 = w.fma(fromMemorySegment(SP, values, v + (d0 + L) * Float.BYTES, BO), o1);
      o2 = w.fma(fromMemorySegment(SP, values, v + (d0 + 2 * L) * Float.BYTES, BO), o2);
      o3 = w.fma(fromMemorySegment(SP, values, v + (d0 + 3 * L) * Float.BYTES, BO), o3);
      o4 = w.fma(fromMemorySegment(SP, values, v + (d0 + 4 * L) * Float.BYTES, BO), o4);
      o5 = w.fma(fromMemorySegment(SP, values, v + (d0 + 5 * L) * Float.BYTES, BO), o5);
      o6 = w.fma(fromMemorySegment(SP, values, v + (d0 + 6 * L) * Float.BYTES, BO), o6);
      o7 = w.fma(fromMemorySegment(SP, values, v + (d0 + 7 * L) * Float.BYTES, BO), o7);
    }
    o0.intoArray(acc, a);
    o1.intoArray(acc, a + L);
    o2.intoArray(acc, a + 2 * L);
    o3.intoArray(acc, a + 3 * L);
    o4.intoArray(acc, a + 4 * L);
    o5.intoArray(acc, a + 5 * L);
    o6.intoArray(acc, a + 6 * L);
    o7.intoArray(acc, a + 7 * L);
  }

  /** One query per head, 8 vectors: the operations of {@link #scores8} per (head, slot). */
  private void scoresOneQuery8(QueryRun run, long[] slots, MemorySegment query,
      MemorySegment keys, float[] scores, float[] max, MemorySegment row) {
    float scale = run.scale();
    ScoreRule rule = run.rule();
    int len = run.width();
    for (int j = 0; j < len; j++) {
      long slot = slots[j];
      long converted = -1;
      for (int i = 0; i < run.heads(); i++) {
        long q = run.queryOffset() + i * run.headBytes();
        long k = slot + run.kvOffset(i);
        if (row != null && k != converted) { // a kv group's heads share the row
          convert(keys, k, 0, 1, 8 * L, row);
          converted = k;
        }
        // one call site: C2 inlines one copy of dot8's 16 loads, not two
        float s = rule.cap(scale * dot8(query, q, row == null ? keys : row,
            row == null ? k : 0));
        scores[i * len + j] = s;
        max[i] = Math.max(max[i], s);
      }
    }
  }

  /**
   * q · k over one fp32 8-vector head row: {@link #scores8}'s operations, in its order. Its own
   * method with only scalars crossing its boundary, so that whether or not C2 inlines it into
   * the slot loop, no vector is ever boxed.
   */
  static float dot8(MemorySegment query, long q, MemorySegment keys, long k) {
    FloatVector a = fromMemorySegment(SP, query, q, BO).mul(fromMemorySegment(SP, keys, k, BO));
    FloatVector c = fromMemorySegment(SP, query, q + VB, BO)
        .mul(fromMemorySegment(SP, keys, k + VB, BO));
    a = fromMemorySegment(SP, query, q + 2 * VB, BO)
        .fma(fromMemorySegment(SP, keys, k + 2 * VB, BO), a);
    c = fromMemorySegment(SP, query, q + 3 * VB, BO)
        .fma(fromMemorySegment(SP, keys, k + 3 * VB, BO), c);
    a = fromMemorySegment(SP, query, q + 4 * VB, BO)
        .fma(fromMemorySegment(SP, keys, k + 4 * VB, BO), a);
    c = fromMemorySegment(SP, query, q + 5 * VB, BO)
        .fma(fromMemorySegment(SP, keys, k + 5 * VB, BO), c);
    a = fromMemorySegment(SP, query, q + 6 * VB, BO)
        .fma(fromMemorySegment(SP, keys, k + 6 * VB, BO), a);
    c = fromMemorySegment(SP, query, q + 7 * VB, BO)
        .fma(fromMemorySegment(SP, keys, k + 7 * VB, BO), c);
    return StableLanes.sum(a.add(c));
  }

  /** One query per head, 8 vectors: per element the fmas of {@link #valueChunk8}, in order. */
  private void valuesOneQuery8(QueryRun run, long[] slots, MemorySegment values,
      float[] p, float[] acc, MemorySegment row) {
    int len = run.width();
    for (int j = 0; j < len; j++) {
      long slot = slots[j];
      long converted = -1;
      for (int i = 0; i < run.heads(); i++) {
        long v = slot + run.kvOffset(i);
        if (row != null && v != converted) {
          convert(values, v, 0, 1, 8 * L, row);
          converted = v;
        }
        addWeighted8(acc, i * 8 * L, p[i * len + j], row == null ? values : row,
            row == null ? v : 0);
      }
    }
  }

  /**
   * acc[a ..] += w * v over one fp32 8-vector head row; its own method for {@link #dot8}'s
   * reason.
   */
  private static void addWeighted8(float[] acc, int a, float weight, MemorySegment values,
      long v) {
    FloatVector w = FloatVector.broadcast(SP, weight);
    for (int d = 0; d < 8; d++) {
      int x = a + d * L;
      w.fma(fromMemorySegment(SP, values, v + d * VB, BO), FloatVector.fromArray(SP, acc, x))
          .intoArray(acc, x);
    }
  }

  // ---- any head size ----

  /** One query per head, any head size: {@link #dot} per (head, slot). */
  private void scoresOneQuery(QueryRun run, long[] slots, MemorySegment query,
      MemorySegment keys, float[] scores, float[] max, MemorySegment row) {
    int len = run.width();
    for (int j = 0; j < len; j++) {
      long slot = slots[j];
      long converted = -1;
      for (int i = 0; i < run.heads(); i++) {
        long k = slot + run.kvOffset(i);
        if (row != null && k != converted) {
          convert(keys, k, 0, 1, run.headSize(), row);
          converted = k;
        }
        float s = run.rule().cap(dot(query, run.queryOffset() + i * run.headBytes(),
            row == null ? keys : row, row == null ? k : 0, run.headSize()) * run.scale());
        scores[i * len + j] = s;
        max[i] = Math.max(max[i], s);
      }
    }
  }

  /** One query per head, any head size: {@link #addWeighted} per (head, slot). */
  private void valuesOneQuery(QueryRun run, long[] slots, MemorySegment values,
      float[] p, float[] acc, MemorySegment row) {
    int len = run.width();
    for (int j = 0; j < len; j++) {
      long slot = slots[j];
      long converted = -1;
      for (int i = 0; i < run.heads(); i++) {
        long v = slot + run.kvOffset(i);
        if (row != null && v != converted) {
          convert(values, v, 0, 1, run.headSize(), row);
          converted = v;
        }
        addWeighted(acc, i * run.headSize(), p[i * len + j], row == null ? values : row,
            row == null ? v : 0, 0, run.headSize());
      }
    }
  }

  /** q · k, any head size: the operations of {@link #scores}, in its order. */
  static float dot(MemorySegment query, long q, MemorySegment keys, long k,
      int headSize) {
    int vecEnd = headSize - headSize % L;
    // two accumulators, even and odd vectors, as scores8: two FMA chains of half the length
    FloatVector a = FloatVector.zero(SP);
    FloatVector c = FloatVector.zero(SP);
    int d = 0;
    for (; d + 2 * L <= vecEnd; d += 2 * L) {
      long off = (long) d * Float.BYTES;
      a = fromMemorySegment(SP, query, q + off, BO)
          .fma(fromMemorySegment(SP, keys, k + off, BO), a);
      c = fromMemorySegment(SP, query, q + off + VB, BO)
          .fma(fromMemorySegment(SP, keys, k + off + VB, BO), c);
    }
    if (d < vecEnd) {
      long off = (long) d * Float.BYTES;
      a = fromMemorySegment(SP, query, q + off, BO)
          .fma(fromMemorySegment(SP, keys, k + off, BO), a);
      d += L;
    }
    float s = StableLanes.sum(a.add(c));
    for (; d < headSize; d++) {
      s += query.get(F, q + (long) d * Float.BYTES) * keys.get(F, k + (long) d * Float.BYTES);
    }
    return s;
  }

  /** acc[a + d] += w * v[d] for d in [from, headSize): the per-slot fmas of {@link #values}. */
  private static void addWeighted(float[] acc, int a, float w, MemorySegment values, long v,
      int from, int headSize) {
    int vecEnd = headSize - headSize % L;
    FloatVector vw = FloatVector.broadcast(SP, w);
    int d = from;
    for (; d < vecEnd; d += L) {
      vw.fma(fromMemorySegment(SP, values, v + (long) d * Float.BYTES, BO),
          FloatVector.fromArray(SP, acc, a + d)).intoArray(acc, a + d);
    }
    for (; d < headSize; d++) {
      acc[a + d] += w * values.get(F, v + (long) d * Float.BYTES);
    }
  }

  /**
   * {@link TiledScores} over spans of {@value #SPAN_BLOCKS} blocks, on heap copies: the run's
   * query rows once, each block's key rows (converted, for a pool that is not fp32) once for all
   * the run's rows.
   */
  private void tiledScores(QueryRun run, MemorySegment query, MemorySegment pool,
      float[] scores, float[] max, Scratch scratch) {
    float[] queries = scratch.queries(run, query);
    float[] keys = scratch.block(SPAN_BLOCKS * run.blockSize() * run.headSize());
    int span = SPAN_BLOCKS * run.blockSize();
    for (int j0 = firstBlock(run) * run.blockSize(); j0 < run.lastLen(); j0 += span) {
      int end = copySpan(pool, run, j0, span, keys, scratch);
      TiledScores.span(run, queries, keys, j0, end, scores, max);
    }
  }

  /** {@link TiledValues} over spans as {@link #tiledScores}. */
  private void tiledValues(QueryRun run, MemorySegment pool, float[] p, float[] acc,
      Scratch scratch) {
    float[] values = scratch.block(SPAN_BLOCKS * run.blockSize() * run.headSize());
    int span = SPAN_BLOCKS * run.blockSize();
    for (int j0 = firstBlock(run) * run.blockSize(); j0 < run.lastLen(); j0 += span) {
      int end = copySpan(pool, run, j0, span, values, scratch);
      TiledValues.span(run, p, values, j0, end, acc);
    }
  }

  /**
   * The rows of positions [j0, min(j0 + span, lastLen)) (j0 at a block's start) as fp32 rows of
   * {@code out}, position j at {@code (j - j0) * headSize}; returns the end.
   */
  private int copySpan(MemorySegment pool, QueryRun run, int j0, int span, float[] out,
      Scratch scratch) {
    int bs = run.blockSize();
    int end = Math.min(j0 + span, run.lastLen());
    for (int j = j0; j < end; j += bs) {
      copyBlock(pool, run.blockBase(j / bs) + run.kvOffset(0), run, Math.min(bs, end - j), out,
          (j - j0) * run.headSize(), scratch);
    }
    return end;
  }

  /** {@code rows} head rows of the pool from {@code start}: fp32 rows of {@code out} from at. */
  private void copyBlock(MemorySegment pool, long start, QueryRun run, int rows, float[] out,
      int at, Scratch scratch) {
    int headSize = run.headSize();
    if (kv.convertsToArray(headSize)) {
      kv.convert(pool, start, run.rowBytes(), rows, headSize, out, at);
      return;
    }
    if (converts) {
      MemorySegment converted = scratch.converted(rows * headSize);
      convert(pool, start, run.rowBytes(), rows, headSize, converted);
      MemorySegment.copy(converted, ValueLayout.JAVA_FLOAT, 0, out, at, rows * headSize);
      return;
    }
    for (int r = 0; r < rows; r++) {
      MemorySegment.copy(pool, F, start + r * run.rowBytes(), out, at + r * headSize, headSize);
    }
  }

  private void scores(QueryRun run, MemorySegment query, MemorySegment pool,
      float[] scores, float[] max, Scratch scratch) {
    int last = run.lastLen();
    int bs = run.blockSize();
    int headSize = run.headSize();
    MemorySegment keys = converts ? scratch.converted(bs * headSize) : pool;
    long rb = converts ? (long) headSize * Float.BYTES : run.rowBytes();
    int w = run.width();
    ScoreRule rule = run.rule();
    for (int b = firstBlock(run), j0 = b * bs; j0 < last; b++, j0 += bs) {
      long start = run.blockBase(b) + run.kvOffset(0);
      if (converts) {
        convert(pool, start, run.rowBytes(), Math.min(bs, last - j0), headSize, keys);
        start = 0;
      }
      for (int i = 0; i < run.heads(); i++) {
        for (int t = firstRowSeeing(run, j0); t < run.queries(); t++) {
          int begin = Math.max(j0, run.from(t));
          if (begin >= j0 + bs) {
            break;
          }
          int r = i * run.queries() + t;
          long q = run.queryOffset() + i * run.headBytes() + t * run.queryStride();
          int end = Math.min(j0 + bs, run.firstLen() + t);
          int base = r * w - run.lo();
          float m = max[r];
          long k = start + (begin - j0) * rb;
          for (int j = begin; j < end; j++, k += rb) {
            float s = rule.cap(dot(query, q, keys, k, headSize) * run.scale());
            scores[base + j] = s;
            m = Math.max(m, s);
          }
          max[r] = m;
        }
      }
    }
  }

  private void values(QueryRun run, MemorySegment pool, float[] p, float[] acc,
      Scratch scratch) {
    int last = run.lastLen();
    int bs = run.blockSize();
    int headSize = run.headSize();
    MemorySegment values = converts ? scratch.converted(bs * headSize) : pool;
    long rb = converts ? (long) headSize * Float.BYTES : run.rowBytes();
    // whole chunks of 8 vectors with their accumulators in registers, then the rest per slot
    int chunked = headSize - headSize % (8 * L);
    int w = run.width();
    for (int b = firstBlock(run), j0 = b * bs; j0 < last; b++, j0 += bs) {
      long start = run.blockBase(b) + run.kvOffset(0);
      if (converts) {
        convert(pool, start, run.rowBytes(), Math.min(bs, last - j0), headSize, values);
        start = 0;
      }
      for (int i = 0; i < run.heads(); i++) {
        for (int t = firstRowSeeing(run, j0); t < run.queries(); t++) {
          int begin = Math.max(j0, run.from(t));
          if (begin >= j0 + bs) {
            break;
          }
          int r = i * run.queries() + t;
          int end = Math.min(j0 + bs, run.firstLen() + t);
          int base = r * w - run.lo();
          long first = start + (begin - j0) * rb;
          for (int d = 0; d < chunked; d += 8 * L) {
            valueChunk8(acc, r * headSize + d, p, base, begin, end, values, first, d, rb);
          }
          if (chunked < headSize) {
            long v = first;
            for (int j = begin; j < end; j++, v += rb) {
              addWeighted(acc, r * headSize, p[base + j], values, v, chunked, headSize);
            }
          }
        }
      }
    }
  }

  // ---- softmax ----

  /** scores[from + j] = exp(scores[from + j] - max) for j < len; returns their sum. */
  private static float exp(float[] scores, int from, int len, float max) {
    FloatVector vmax = FloatVector.broadcast(SP, max);
    FloatVector vsum = FloatVector.zero(SP);
    int i = from;
    int end = from + len;
    for (; i + L <= end; i += L) {
      FloatVector e = StableLanes.exp(FloatVector.fromArray(SP, scores, i).sub(vmax));
      e.intoArray(scores, i);
      vsum = vsum.add(e);
    }
    float sum = StableLanes.sum(vsum);
    for (; i < end; i++) {
      float e = StableLanes.exp(scores[i] - max);
      scores[i] = e;
      sum += e;
    }
    return sum;
  }

  // ---- cache rows ----

  /**
   * Reads a cache head row as floats: {@link #convert} L values from value {@code d} on, {@link
   * #get} one (loop tails); both give the same bits for the same value.
   */
  abstract static class Rows {
    private static final VectorSpecies<Integer> IS = VectorSpecies.of(int.class, SP.vectorShape());
    private static final VectorSpecies<Short> SS =
        VectorSpecies.of(short.class, VectorShape.forBitSize(L * Short.SIZE));
    /** 8 bytes (the narrowest byte vector); with 4 float lanes only the first 4 are read. */
    private static final VectorSpecies<Byte> BS = ByteVector.SPECIES_64;
    private static final VectorMask<Byte> FIRST_L = BS.indexInRange(0, L);

    final KvDtype dtype;

    Rows(KvDtype dtype) {
      this.dtype = dtype;
    }

    /**
     * Writes L values of the row from value {@code d} on, as floats, at byte {@code o} of {@code
     * out}. A store, not a returned vector: no vector crosses this call, so that if C2 leaves it
     * out of line (over its node budget, as it did a {@code load} helper in a served decode
     * step) nothing is boxed (docs/benchmarks/journal/2026-11-28c-decode-heap.md). {@code d} is a
     * long so that the address stays one affine expression C2 folds
     * (docs/benchmarks/journal/2026-11-28-kernel-prefill.md).
     */
    abstract void convert(MemorySegment m, long row, long d, MemorySegment out, long o);

    /**
     * Whether {@link #convert(MemorySegment, long, long, int, int, float[], int)} takes rows of
     * this head size: bf16 only, whose conversion (a shift) is cheap enough to write straight
     * into the tiles' heap rows; the other narrow types go through {@link #convert} and a copy.
     */
    boolean convertsToArray(int headSize) {
      return false;
    }

    /**
     * {@code rows} head rows, {@code rowBytes} apart from {@code start}, as fp32 rows of {@code
     * out} from {@code at}: the values {@link #convert} gives, without the copy through a segment.
     */
    void convert(MemorySegment m, long start, long rowBytes, int rows, int headSize, float[] out,
        int at) {
      throw new UnsupportedOperationException(dtype.name());
    }

    /** Values per {@link #convert}. */
    static int lanes() {
      return L;
    }

    final float get(MemorySegment m, long row, int d) {
      return dtype.decode(m, row, d);
    }

    /**
     * Each class's own factory, not {@code new} here: returning a {@code new Bf16()} as a {@link
     * Rows} makes the verifier load Bf16 with this method, so all five classes were loaded in
     * every JVM, C2's class-hierarchy analysis no longer saw a single {@code convert}, and each of a
     * key row's 8 loads kept a type-profile guard (-XX:+PrintInlining: "TypeProfile ... = F32").
     * A class loads only when its {@code create} first runs, so a server, which
     * runs one dtype, loads one and inlines it unguarded.
     */
    static Rows of(KvDtype dtype) {
      return switch (dtype) {
        case FLOAT32 -> F32.create();
        case BFLOAT16 -> Bf16.create();
        case FLOAT16 -> F16.create();
        case INT8 -> I8.create();
        case FP8 -> Fp8.create();
      };
    }

    // No helpers that return vectors (the loads are written out in each class): each would be
    // one more call a vector could be boxed across.

    static final class F32 extends Rows {
      static Rows create() {
        return new F32();
      }

      F32() {
        super(KvDtype.FLOAT32);
      }

      @Override
      void convert(MemorySegment m, long row, long d, MemorySegment out, long o) {
        fromMemorySegment(SP, m, row + d * Float.BYTES, BO).intoMemorySegment(out, o, BO);
      }
    }

    static final class Bf16 extends Rows {
      static Rows create() {
        return new Bf16();
      }

      Bf16() {
        super(KvDtype.BFLOAT16);
      }

      @Override
      void convert(MemorySegment m, long row, long d, MemorySegment out, long o) {
        ((IntVector) ShortVector.fromMemorySegment(SS, m, row + 2L * d, BO)
            .convertShape(VectorOperators.S2I, IS, 0)).lanewise(VectorOperators.LSHL, 16)
            .reinterpretAsFloats().intoMemorySegment(out, o, BO);
      }

      // The tiles' block copies: 16 values a step with the wide tiles (their heads are whole
      // 512-bit vectors), L otherwise. A decode step of the 1B shape at a 1,500-token context
      // spent half its attention time converting through a segment and copying (JFR).
      private static final VectorSpecies<Short> ROW_SHORTS =
          WideTiles.ON ? ShortVector.SPECIES_256 : SS;
      private static final VectorSpecies<Integer> ROW_INTS =
          WideTiles.ON ? IntVector.SPECIES_512 : IS;

      @Override
      boolean convertsToArray(int headSize) {
        return headSize % ROW_INTS.length() == 0;
      }

      @Override
      void convert(MemorySegment m, long start, long rowBytes, int rows, int headSize,
          float[] out, int at) {
        int step = ROW_INTS.length();
        for (int r = 0; r < rows; r++) {
          long src = start + r * rowBytes;
          int dst = at + r * headSize;
          for (int d = 0; d < headSize; d += step) {
            ((IntVector) ShortVector.fromMemorySegment(ROW_SHORTS, m, src + 2L * d, BO)
                .convertShape(VectorOperators.S2I, ROW_INTS, 0))
                .lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats().intoArray(out, dst + d);
          }
        }
      }
    }

    static final class F16 extends Rows {
      static Rows create() {
        return new F16();
      }

      F16() {
        super(KvDtype.FLOAT16);
      }

      /**
       * The half's exponent and mantissa moved into a float's places and scaled by 2^(127 - 15):
       * exact for normals and subnormals alike (a power-of-two product; a half's subnormal is a
       * float subnormal times 2^112, a normal float). Infinity and NaN (exponent all ones) get
       * the float's all-ones exponent instead, without a mask. Fewer vector operations than the
       * former blend-per-case form (KernelBench 1 4 1024 32 64 30 1 with bench.kv=float16, CPU
       * time: 24.4 -> ~21 ms per layer, fp32 7.3, bf16 8.7). It is still too many for C2's node
       * budget in the 8-load loops: the last loads stay out of line and their vectors are boxed
       * (JFR: most of a serving JVM's allocation). bf16, a shift, is the fast 16-bit cache.
       */
      @Override
      void convert(MemorySegment m, long row, long d, MemorySegment out, long o) {
        IntVector h = (IntVector) ShortVector.fromMemorySegment(SS, m, row + 2L * d, BO)
            .convertShape(VectorOperators.S2I, IS, 0); // sign-extended: bits 15..31 are the sign
        IntVector bits = h.lanewise(VectorOperators.LSHL, 13).and(0x8FFFE000);
        // 0x10000000 exactly when the half's exponent is all ones (the +1 carries out of it)
        IntVector special = bits.and(0x0F800000).add(0x00800000).and(0x10000000);
        // infinity and NaN: exponent 31 + 112 after the product, raised by 112 more to 255
        bits.reinterpretAsFloats().mul(0x1p112f).reinterpretAsInts()
            .add(special.lanewise(VectorOperators.LSHR, 1).mul(7)).reinterpretAsFloats()
            .intoMemorySegment(out, o, BO);
      }
    }

    static final class I8 extends Rows {
      static Rows create() {
        return new I8();
      }

      I8() {
        super(KvDtype.INT8);
      }

      @Override
      void convert(MemorySegment m, long row, long d, MemorySegment out, long o) {
        // 8 lanes when L == 8; else masked, so that the last row of a pool is not overread
        long at = row + Float.BYTES + d;
        ByteVector b = L == 8 ? ByteVector.fromMemorySegment(BS, m, at, BO)
            : ByteVector.fromMemorySegment(BS, m, at, BO, FIRST_L);
        ((FloatVector) b.convertShape(VectorOperators.B2F, SP, 0)).mul(m.get(F, row))
            .intoMemorySegment(out, o, BO);
      }
    }

    static final class Fp8 extends Rows {
      static Rows create() {
        return new Fp8();
      }

      Fp8() {
        super(KvDtype.FP8);
      }

      /** As {@link F16}: exponent rebiased by 127 - 7, subnormals times 2^-9, 0x7F NaN. */
      @Override
      void convert(MemorySegment m, long row, long d, MemorySegment out, long o) {
        long at = row + Float.BYTES + d; // masked as I8's
        ByteVector raw = L == 8 ? ByteVector.fromMemorySegment(BS, m, at, BO)
            : ByteVector.fromMemorySegment(BS, m, at, BO, FIRST_L);
        IntVector b = ((IntVector) raw.convertShape(VectorOperators.B2I, IS, 0)).and(0xFF);
        IntVector mag = b.and(0x7F);
        IntVector bits = mag.lanewise(VectorOperators.LSHL, 20).add(120 << 23)
            .blend(Float.floatToRawIntBits(Float.NaN), mag.compare(VectorOperators.EQ, 0x7F));
        FloatVector sub = ((FloatVector) b.and(7).convert(VectorOperators.I2F, 0)).mul(0x1p-9f);
        bits = bits.blend(sub.reinterpretAsInts(),
            b.and(0x78).compare(VectorOperators.EQ, 0));
        bits.or(b.and(0x80).lanewise(VectorOperators.LSHL, 24)).reinterpretAsFloats()
            .mul(m.get(F, row)).intoMemorySegment(out, o, BO);
      }
    }
  }
}
