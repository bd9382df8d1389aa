package dev.radixserve.model;

import dev.radixserve.model.weights.RandomLlama;
import dev.radixserve.model.weights.RandomGpt2;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Decode step time against its memory roofline, and prefill throughput, for the CPU runner. Run
 * as a main class (docs/benchmarks/journal/2026-11-21-to-28.md has the command):
 *
 * <pre>
 *   DecodeStepBench [embedded|gpt2-small|llama-small] [intra-op threads = 2] [seqs = 1,8,32,64]
 *                   [contexts = 128,512,960] [steps = 10] [ORT session config key=value ...]
 * </pre>
 *
 * For every (sequences S, context C): S sequences whose first C positions are in the pool decode
 * one token each; the step's median time over {@code steps} steps beside
 * {@code roofline = (weight bytes + KV bytes) / read bandwidth}, where weight bytes are every
 * layer's weights plus the token embedding the LM head reads in full (the position embedding is
 * only gathered, S rows), KV bytes = S × (C + 1) × 2 × layers × width × 4 (every key and value a
 * query reads), and the read bandwidth is a plain {@code long[]} sum over 1 GiB with the same
 * number of threads, measured first in the same run. The pool's contents are a fill pattern, not
 * a real prefill: the work per step does not depend on the values.
 *
 * <p>"attention" is the time inside the paged-attention kernel (all layers), when the runtime has
 * one ({@code PagedAttentionOp.kernelNanos}); "-" otherwise.
 */
public final class DecodeStepBench {

  /**
   * {@code -Dbench.quantization=int8|int4}: the runner quantized as the server's default for
   * that mode (the roofline's weight bytes stay fp32's: read the step times, not the ratio).
   */
  private static dev.radixserve.model.quant.QuantSpec quantization() {
    String mode = System.getProperty("bench.quantization", "none");
    return dev.radixserve.model.quant.QuantSpec.of(dev.radixserve.model.quant.QuantMode.parse(mode));
  }

  private static final int BLOCK = 16;
  private static final int PREFILL_TOKENS = 512;
  /**
   * {@code -Dbench.layout=contiguous}: each sequence's blocks in one run of ids, as the server's
   * {@code BlockPool} hands out a prompt prefilled in one chunk; default: shuffled ids, blocks
   * scattered over the pool (the worst case, where the prefetcher restarts at every block).
   */
  private static final boolean CONTIGUOUS =
      "contiguous".equals(System.getProperty("bench.layout", "shuffled"));

  private DecodeStepBench() {}

  /**
   * Runs on a thread with a 16 MiB stack: ONNX Runtime's environment and session creation need
   * more than a 1 MiB main thread has left (it segfaults there, as RadixServer's start notes).
   */
  public static void main(String[] args) throws Exception {
    onLargeStack(() -> bench(args));
  }

  /** A benchmark's body, which may throw. */
  interface Body {
    void run() throws Exception;
  }

  /** Runs {@code body} on a platform thread with a 16 MiB stack and waits for it. */
  static void onLargeStack(Body body) throws Exception {
    java.util.concurrent.FutureTask<Void> run = new java.util.concurrent.FutureTask<>(() -> {
      body.run();
      return null;
    });
    Thread.ofPlatform().name("bench").stackSize(16L << 20).start(run);
    run.get();
  }

  private static void bench(String[] args) throws Exception {
    String model = args.length > 0 ? args[0] : "embedded";
    int threads = args.length > 1 ? Integer.parseInt(args[1]) : 2;
    int[] seqs = args.length > 2 ? ints(args[2]) : new int[] {1, 8, 32, 64};
    int[] contexts = args.length > 3 ? ints(args[3]) : new int[] {128, 512, 960};
    int steps = args.length > 4 ? Integer.parseInt(args[4]) : 10;
    Map<String, String> sessionConfig = new LinkedHashMap<>();
    for (int i = 5; i < args.length; i++) {
      String[] kv = args[i].split("=", 2);
      sessionConfig.put(kv[0], kv[1]);
    }
    ModelWeights w = switch (model) {
      case "embedded" -> RandomGpt2.create(ModelConfig.embeddedDefault(), 0);
      case "gpt2-small" -> RandomGpt2.create(GPT2_SMALL, 0);
      case "llama-small" -> RandomLlama.create(LLAMA_SMALL, 0);
      default -> throw new IllegalArgumentException("model: embedded, gpt2-small or llama-small");
    };
    ModelShape config = w.config();
    double bandwidth = readBandwidth(threads);
    double copy = copyBandwidth(threads);
    System.out.printf("model %s %s, block %d, intra-op threads %d, %d steps per point, ORT config"
        + " %s, KV pool on huge pages %s, block layout %s%n", model, config, BLOCK, threads,
        steps, sessionConfig, System.getProperty("radixserve.hugePages", "true"),
        CONTIGUOUS ? "contiguous" : "shuffled");
    System.out.printf("read bandwidth (long[] sum of 1 GiB, %d threads, best of 5): %.1f GB/s%n",
        threads, bandwidth / 1e9);
    System.out.printf("copy bandwidth (System.arraycopy of 512 MiB, %d threads, best of 5, bytes"
        + " read + written as STREAM counts them): %.1f GB/s%n", threads, copy / 1e9);
    int maxSeqs = Arrays.stream(seqs).max().orElseThrow();
    int maxContext = Arrays.stream(contexts).max().orElseThrow();
    int blocksPerSeq = (maxContext + 1 + BLOCK - 1) / BLOCK;
    long weightBytes = weightBytes(w);
    // the prefill prompts need 512 / B blocks whatever the decode points are
    int numBlocks = Math.max(maxSeqs * blocksPerSeq, PREFILL_TOKENS / BLOCK);
    // -Dbench.numBlocks=N: a pool as large as a server's (its pool is sized by memory, not use)
    numBlocks = Math.max(numBlocks, Integer.getInteger("bench.numBlocks", 0));
    try (w;
        OnnxModelRunner runner = OnnxModelRunner.create(w, BLOCK, numBlocks, threads,
            sessionConfig, quantization())) {
      KvPool pool = runner.kvPool();
      for (int l = 0; l < config.nLayer(); l++) {
        pool.keys(l).fill((byte) 0x3c); // touch every page: untouched pages would read as zeros
        pool.values(l).fill((byte) 0x3c);
      }
      List<Integer> ids = new ArrayList<>();
      for (int b = 0; b < pool.numBlocks(); b++) {
        ids.add(b);
      }
      if (!CONTIGUOUS) {
        Collections.shuffle(ids, new Random(1));
      }
      int[][] tables = new int[maxSeqs][blocksPerSeq];
      for (int s = 0; s < maxSeqs; s++) {
        for (int b = 0; b < blocksPerSeq; b++) {
          tables[s][b] = ids.get(s * blocksPerSeq + b);
        }
      }
      System.out.printf("weights read per step: %.1f MB; batch-1 bound = %.1f MB / %.1f GB/s"
          + " (copy) = %.1f ms%n", weightBytes / 1e6, weightBytes / 1e6, copy / 1e9,
          weightBytes / copy * 1e3);
      // warm-up: compile the Java kernel and start ONNX Runtime's threads before measuring
      for (int s : seqs) {
        decode(runner, tables, s, contexts[0], 10);
      }
      System.out.println("| S | context | step p50 ms | attention ms | KV MB | roofline ms"
          + " | step / roofline |");
      System.out.println("|---:|---:|---:|---:|---:|---:|---:|");
      for (int s : seqs) {
        for (int c : contexts) {
          // per point: the JIT deoptimises the kernel on a shape it has not seen (measured:
          // 13 ms instead of 0.5 for S = 1 right after S = 32), so let it recompile first
          decode(runner, tables, s, c, Math.max(3, steps / 2));
          double[] r = decode(runner, tables, s, c, steps);
          long kvBytes = (long) s * (c + 1) * 2L * config.nLayer() * config.kvWidth() * 4;
          double roofline = (weightBytes + kvBytes) / bandwidth * 1e3;
          System.out.printf("| %d | %d | %.1f | %s | %.0f | %.1f | %.2f |%n", s, c, r[0],
              r[1] < 0 ? "-" : String.format("%.1f", r[1]), kvBytes / 1e6, roofline,
              r[0] / roofline);
        }
      }
      prefill(runner, ids.stream().limit(PREFILL_TOKENS / BLOCK).mapToInt(i -> i).toArray(),
          config);
    }
  }

  /** {median step ms, median attention ms or -1} for S sequences decoding at position C. */
  private static double[] decode(OnnxModelRunner runner, int[][] tables, int seqs, int context,
      int steps) {
    double[] stepMs = new double[steps];
    double[] attnMs = new double[steps];
    for (int i = 0; i < steps; i++) {
      List<ForwardBatch.Seq> batch = new ArrayList<>();
      for (int s = 0; s < seqs; s++) {
        batch.add(new ForwardBatch.Seq(new int[] {(s * 131 + i) % 50257}, context, tables[s]));
      }
      long k0 = kernelNanos();
      long t0 = System.nanoTime();
      runner.forward(new ForwardBatch(batch));
      stepMs[i] = (System.nanoTime() - t0) / 1e6;
      long k1 = kernelNanos();
      attnMs[i] = k0 < 0 ? -1 : (k1 - k0) / 1e6;
    }
    Arrays.sort(stepMs);
    Arrays.sort(attnMs);
    return new double[] {stepMs[steps / 2], attnMs[steps / 2]};
  }

  /**
   * Prefill of one 512-token prompt and of 4 prompts of 128, tokens/s: median of 5 after 20
   * warm-up runs (the kernel's loops were compiled for decode steps so far: they must be
   * recompiled with prefill-shaped profiles before they are measured).
   */
  private static void prefill(OnnxModelRunner runner, int[] table, ModelShape config) {
    int warmup = 20;
    int runs = 5;
    for (int[] shape : new int[][] {{1, PREFILL_TOKENS}, {4, PREFILL_TOKENS / 4}}) {
      int seqs = shape[0];
      int len = shape[1];
      double[] tps = new double[runs];
      double[] attn = new double[runs];
      for (int r = -warmup; r < runs; r++) {
        List<ForwardBatch.Seq> batch = new ArrayList<>();
        for (int s = 0; s < seqs; s++) {
          int[] prompt = new int[len];
          for (int i = 0; i < len; i++) {
            prompt[i] = (i * 31 + s * 977 + r + warmup) % config.vocabSize();
          }
          // sequence s uses table blocks [s * len / B, ...): disjoint slots
          int[] t = Arrays.copyOfRange(table, s * len / BLOCK, s * len / BLOCK + len / BLOCK);
          batch.add(new ForwardBatch.Seq(prompt, 0, t));
        }
        long k0 = kernelNanos();
        long t0 = System.nanoTime();
        runner.forward(new ForwardBatch(batch));
        if (r >= 0) {
          tps[r] = seqs * len / ((System.nanoTime() - t0) / 1e9);
          attn[r] = k0 < 0 ? -1 : (kernelNanos() - k0) / 1e6;
        }
      }
      Arrays.sort(tps);
      Arrays.sort(attn);
      double p50 = tps[runs / 2];
      System.out.printf("prefill %d x %d tokens: %.0f tokens/s (%.1f ms; attention %s ms)%n",
          seqs, len, p50, seqs * len / p50 * 1e3,
          attn[runs / 2] < 0 ? "-" : String.format("%.1f", attn[runs / 2]));
    }
  }

  /**
   * A Llama-family model of GPT-2-small's size: 12 layers, 768 wide, 12 heads over 4 kv heads,
   * SwiGLU 2,048 wide (three matrices: GPT-2's MLP FLOPs), GPT-2's vocabulary, tied head.
   */
  /** GPT-2-small's shape (12 layers × 768, vocabulary 50,257). */
  static final ModelConfig GPT2_SMALL = new ModelConfig(12, 12, 768, 1024, 50257, 1e-5, "gelu_new");

  static final LlamaConfig LLAMA_SMALL =
      LlamaConfig.llama(12, 768, 12, 4, 2048, 1024, 50257).withTiedEmbeddings();

  /**
   * Every weight a decode step reads in full, fp32: all of them but the position table
   * ({@code wpe.weight}: S rows gathered); the token embedding counts as the LM head.
   */
  static long weightBytes(ModelWeights w) {
    long elements = 0;
    for (var e : w.graph().initializers().entrySet()) {
      if (!e.getKey().equals("wpe.weight")) {
        elements += dev.radixserve.model.weights.Tensor.elementCount(e.getValue());
      }
    }
    return 4 * elements;
  }

  /** Bytes per second a plain long[] sum reads with {@code threads} threads. */
  static double readBandwidth(int threads) throws InterruptedException {
    long[] data = new long[128 << 20]; // 1 GiB
    Arrays.fill(data, 3);
    long[] sums = new long[threads];
    // compile the loop before timing it: timed from cold, a run could end in an OSR version that
    // read at 7 GB/s while the same loop compiled reads 20 (seen on this host, 2026-11-23)
    for (int i = 0; i < 20_000; i++) {
      sums[0] += sum(data, 0, 4096);
    }
    Arrays.fill(sums, 0);
    double seconds = bestOfFive(threads, id ->
        sums[id] = sum(data, share(data.length, id, threads), share(data.length, id + 1, threads)));
    if (Arrays.stream(sums).sum() != 3L * data.length) {
      throw new IllegalStateException("bad sum");
    }
    return data.length * 8.0 / seconds;
  }

  private static long sum(long[] data, int from, int to) {
    long sum = 0;
    for (int k = from; k < to; k++) {
      sum += data[k];
    }
    return sum;
  }

  /**
   * Bytes per second {@code threads} threads move with {@code System.arraycopy} (each copies its
   * share of 512 MiB), counted as STREAM's Copy counts them: bytes read plus bytes written.
   */
  static double copyBandwidth(int threads) throws InterruptedException {
    long[] from = new long[64 << 20]; // 512 MiB
    long[] to = new long[from.length];
    Arrays.fill(from, 5);
    Arrays.fill(to, 1);
    double seconds = bestOfFive(threads, id -> {
      int a = share(from.length, id, threads);
      System.arraycopy(from, a, to, a, share(from.length, id + 1, threads) - a);
    });
    if (to[to.length - 1] != 5) {
      throw new IllegalStateException("copy did not happen");
    }
    return 2 * from.length * 8.0 / seconds;
  }

  /** Start of part {@code id} of {@code n} elements split in {@code parts}. */
  private static int share(int n, int id, int parts) {
    return (int) ((long) n * id / parts);
  }

  /** The shortest wall time, in seconds, of five runs of {@code part(0..threads-1)} at once. */
  private static double bestOfFive(int threads, java.util.function.IntConsumer part)
      throws InterruptedException {
    double best = Double.MAX_VALUE;
    for (int r = 0; r < 5; r++) {
      Thread[] ts = new Thread[threads];
      long t0 = System.nanoTime();
      for (int i = 0; i < threads; i++) {
        int id = i;
        ts[i] = Thread.ofPlatform().start(() -> part.accept(id));
      }
      for (Thread t : ts) {
        t.join();
      }
      best = Math.min(best, (System.nanoTime() - t0) / 1e9);
    }
    return best;
  }

  /** The kernel's counter when this runtime has the paged-attention op, else -1. */
  private static long kernelNanos() {
    try {
      return (long) Class.forName("dev.radixserve.model.attention.PagedAttentionOp")
          .getMethod("kernelNanos").invoke(null);
    } catch (ReflectiveOperationException e) {
      return -1;
    }
  }

  private static int[] ints(String csv) {
    return Arrays.stream(csv.split(",")).mapToInt(Integer::parseInt).toArray();
  }
}
