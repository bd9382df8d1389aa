package dev.radixserve.model.attention;

import dev.radixserve.model.graph.KvDtype;
import java.lang.foreign.Arena;
import java.util.Arrays;
import java.util.concurrent.ForkJoinPool;
import java.util.stream.IntStream;

/**
 * The CPU paged-attention kernel alone, outside ONNX Runtime: S sequences of C past tokens
 * decoding one token each (4 pools, as 4 layers, so the caches are not warm), serial and over a
 * Java pool of N threads; prints ms per layer and the K/V read rate.
 *
 * <pre>java --add-modules jdk.incubator.vector -cp ... dev.radixserve.model.attention.KernelBench
 *     threads seqs context heads headSize reps [new tokens [kv heads]]</pre>
 *
 * {@code kv heads} (default: {@code heads}) below {@code heads} gives grouped-query attention,
 * as the served Llama shapes have (the 1B: 32 heads over 8 kv heads of 64): a decode step then
 * reads each converted kv row for a group of query heads, and the figure is per layer of that
 * shape. Each line also gives the bytes the timing thread allocated per layer (threads 1), which
 * steady-state attention keeps at 0: a non-zero figure means C2 boxed vectors.
 *
 * Block ids are shuffled over the pool; {@code -Dbench.layout=contiguous} gives each sequence one
 * run of ids instead, as the server's {@code BlockPool} hands out a prompt. {@code
 * -Dbench.layers=N} (default 4) cycles over N pools: enough of them (e.g. 96 at 1 × 512) and
 * every layer's K/V comes from memory, as in a model whose weights stream through the caches
 * between two attention nodes. {@code -Dbench.kv=int8} (float32, bfloat16, float16, int8, fp8)
 * keeps the pools in that {@link dev.radixserve.model.graph.KvDtype}; the read rate is then of
 * the bytes the pool holds. {@code -Dbench.clock=cpu} (threads 1 only) times the thread's CPU time
 * instead of the wall clock and prints the fastest repetition too: on a machine that other work
 * keeps busy, time spent descheduled then stays out of the figure. {@code -Dbench.decode=slots}
 * takes a grouped-query decode step slot by slot, as before the grouped tiles (for A/B runs).
 * {@code -Dbench.shared=true}: every sequence's full past blocks are sequence 0's, as the
 * requests of a shared system prompt read the blocks the radix cache holds.
 */
public final class KernelBench {
  public static void main(String[] args) {
    int threads = Integer.parseInt(args[0]);
    int seqs = Integer.parseInt(args[1]);
    int context = Integer.parseInt(args[2]);
    int heads = Integer.parseInt(args[3]);
    int headSize = Integer.parseInt(args[4]);
    int reps = Integer.parseInt(args[5]);
    int fresh = args.length > 6 ? Integer.parseInt(args[6]) : 1;
    int kvHeads = args.length > 7 ? Integer.parseInt(args[7]) : heads;
    int block = 16;
    int[][] shapes = new int[seqs][];
    for (int s = 0; s < seqs; s++) {
      shapes[s] = new int[] {context, fresh, s > 0 && Boolean.getBoolean("bench.shared") ? 0 : -1};
    }
    int blocks = seqs * ((context + fresh) / block + 2) + 8;
    Arena arena = Arena.ofShared();
    AttentionCase[] layers = new AttentionCase[Integer.getInteger("bench.layers", 4)];
    for (int l = 0; l < layers.length; l++) {
      layers[l] = new AttentionCase(arena, 7 + l, heads, kvHeads, headSize, block, blocks, shapes,
          !"contiguous".equals(System.getProperty("bench.layout"))); // as DecodeStepBench
    }
    KvDtype kv = KvDtype.ofSetting(System.getProperty("bench.kv", "float32"));
    PagedAttentionStep[] steps = new PagedAttentionStep[layers.length];
    for (int l = 0; l < layers.length; l++) {
      AttentionCase c = layers[l];
      int rows = c.numBlocks * block * kvHeads;
      steps[l] = kv == KvDtype.FLOAT32 ? c.step() : new PagedAttentionStep(c.query, c.key,
          c.value, KvDtypeKernelTest.encode(arena, c.keyCache, kv, rows, headSize),
          KvDtypeKernelTest.encode(arena, c.valueCache, kv, rows, headSize), c.output, c.tokens,
          c.numBlocks, block, headSize, c.cu, c.past, c.tables, c.maxBlocks);
    }
    PagedAttentionKernel kernel = new PagedAttentionKernel(heads, kvHeads, headSize, 0,
        ScoreRule.FULL, "slots".equals(System.getProperty("bench.decode"))
            ? new VectorRowAttention(kv, false) : RowAttention.best(kv), kv);
    ForkJoinPool pool = new ForkJoinPool(threads);
    PagedAttentionKernel.Parallel parallel = threads == 1 ? PagedAttentionKernel.Parallel.SERIAL
        : (items, item) -> pool.submit(() -> IntStream.range(0, items).parallel().forEach(item))
            .join();
    double kvMb = (double) seqs * (context + fresh) * 2 * kvHeads * kv.headRowBytes(headSize) / 1e6;
    boolean cpuClock = "cpu".equals(System.getProperty("bench.clock"));
    if (cpuClock && threads != 1) {
      throw new IllegalArgumentException("bench.clock=cpu times one thread: run with threads 1");
    }
    com.sun.management.ThreadMXBean clock = (com.sun.management.ThreadMXBean)
        java.lang.management.ManagementFactory.getThreadMXBean();
    for (int round = 0; round < 3; round++) {
      double[] ms = new double[reps];
      long allocated = clock.getCurrentThreadAllocatedBytes();
      for (int r = 0; r < reps; r++) {
        long t0 = cpuClock ? clock.getCurrentThreadCpuTime() : System.nanoTime();
        for (PagedAttentionStep step : steps) {
          kernel.run(step, parallel);
        }
        long t1 = cpuClock ? clock.getCurrentThreadCpuTime() : System.nanoTime();
        ms[r] = (t1 - t0) / 1e6 / layers.length;
      }
      allocated = clock.getCurrentThreadAllocatedBytes() - allocated;
      Arrays.sort(ms);
      double p50 = ms[reps / 2];
      System.out.printf("%s: threads %d, %d x %d (+%d), heads %d (kv %d) x %d: %.2f ms per layer,"
          + " %.1f GB/s, %d bytes allocated per layer%s%n", kv.settingName(), threads, seqs,
          context, fresh, heads, kvHeads, headSize, p50, kvMb / p50,
          allocated / ((long) reps * layers.length),
          cpuClock ? String.format(" (thread CPU time; fastest %.2f ms)", ms[0]) : "");
    }
    pool.shutdown();
  }
}
