package dev.radixserve.model;

import dev.radixserve.model.quant.QuantMode;
import dev.radixserve.model.quant.QuantSpec;
import dev.radixserve.model.weights.DType;
import dev.radixserve.model.weights.GptWeights;
import dev.radixserve.model.weights.HfModelLoader;
import dev.radixserve.model.weights.HfModelWriter;
import dev.radixserve.model.weights.LoadedModel;
import dev.radixserve.model.weights.RandomGpt2;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Quantization modes side by side in one run: accuracy against fp32 and speed against each
 * mode's memory roofline. Run as a main class (docs/benchmarks/journal/2026-11-21-to-28.md has the command):
 *
 * <pre>
 *   QuantBench [gpt2-small|embedded|bf16-checkpoint] [intra-op threads = 2]
 *              [accuracy|speed|both|paired|requests|prefill-chunks]
 *              [variants: indices into variants(), e.g. 1,2; fp32 is always measured]
 * </pre>
 *
 * Accuracy, per variant, over a fixed prompt set (8 prompts of 16 seeded token ids, 32 greedy
 * tokens each):
 * <ul>
 *   <li>greedy agreement: the share of the 32 tokens a variant generates before its first token
 *       that differs from fp32's, averaged over prompts;
 *   <li>mean |Δ logprob|: teacher-forced on fp32's continuation, the chosen (fp32 greedy) token's
 *       log-probability under the variant against under fp32, over all 8 × 32 positions;
 *   <li>top-5 overlap: |top-5(fp32) ∩ top-5(variant)| / 5 at the same positions.
 * </ul>
 * Speed, per variant: batch-1 decode at context 128 (median step of 30), prefill of one
 * 512-token prompt (median of 5 after warm-up), the bytes a decode step reads (linear weights in
 * the variant's format + fp32 embedding rows, norms, biases, the LM head in its format, the KV it
 * attends over) and the roofline = those bytes ÷ copy bandwidth measured in the same run. On a
 * shared machine wall times measure the neighbours too, so with one intra-op thread (ONNX
 * Runtime then computes on the calling thread) steps and copy are also timed by the thread's CPU
 * time. Two rounds over the variants; each variant's better round is reported.
 */
public final class QuantBench {

  private static final int BLOCK = 16;
  private static final int PROMPTS = 8;
  private static final int PROMPT_LEN = 16;
  private static final int GEN = 32;
  private static final int DECODE_CONTEXT = 128;
  private static final int PREFILL = 512;
  private static final int ROUNDS = 2;
  private static final java.lang.management.ThreadMXBean THREADS =
      java.lang.management.ManagementFactory.getThreadMXBean();

  private QuantBench() {}

  /** The variants measured: the three modes at their defaults, then the alternatives. */
  static Map<String, QuantSpec> variants() {
    Map<String, QuantSpec> v = new LinkedHashMap<>();
    v.put("none (fp32)", QuantSpec.none());
    QuantSpec int8 = QuantSpec.of(QuantMode.INT8).withLmHead(false);
    QuantSpec int4 = QuantSpec.of(QuantMode.INT4);
    // symmetric int4, the default until 2026-11-25: the variants below keep measuring it
    QuantSpec int4sym = int4.withZeroPoints(false);
    v.put("int8 b32 sym acc4", int8);
    v.put("int4 b32 zp acc4 + int8 LM head (default)", int4);
    v.put("int8 b32 sym acc0", int8.withAccuracyLevel(0));
    v.put("int4 b32 sym acc0", int4sym.withAccuracyLevel(0));
    v.put("int8 b64 sym acc4", int8.withBlockSize(64));
    v.put("int4 b64 sym acc4", int4sym.withBlockSize(64));
    v.put("int8 b32 zp acc4", int8.withZeroPoints(true));
    v.put("int4 b32 sym acc4 + int8 LM head", int4sym);
    v.put("int8 b32 sym acc4 + LM head (default)", int8.withLmHead(true));
    v.put("int4 b32 sym acc4 + LM head", int4sym.withLmHead(true));
    // the int8 default's larger blocks (fewer scales to read, fewer activation blocks to
    // quantize per step): the follow-up's look for a cheap decode win
    v.put("int8 b64 sym acc4 + LM head", int8.withLmHead(true).withBlockSize(64)
        .withHeadBlockSize(64));
    v.put("int8 b128 sym acc4 + LM head", int8.withLmHead(true).withBlockSize(128)
        .withHeadBlockSize(128));
    v.put("int8 b256 sym acc4 + LM head", int8.withLmHead(true).withBlockSize(256)
        .withHeadBlockSize(256));
    // int4's default head was fp32 until 2026-11-25; int8 since (index 2)
    v.put("int4 b32 sym acc4, LM head fp32", int4sym.withLmHead(false));
    // the defaults' LM head in the layers' 32-weight blocks, as until 2026-11-25 (since: 128)
    v.put("int4 b32 zp acc4 + int8 LM head b32", int4.withHeadBlockSize(32));
    v.put("int8 b32 sym acc4 + LM head b32", int8.withLmHead(true).withHeadBlockSize(32));
    // int4's default with larger blocks: MLAS's 4-bit int8-compute kernels read a float scale
    // and a float block sum per block, so 32-weight blocks cost 6 bits a weight, 64 cost 5
    v.put("int4 b64 zp acc4 + int8 LM head", int4.withBlockSize(64));
    v.put("int4 b128 zp acc4 + int8 LM head", int4.withBlockSize(128));
    return v;
  }

  public static void main(String[] args) throws Exception {
    String model = args.length > 0 ? args[0] : "embedded";
    int threads = args.length > 1 ? Integer.parseInt(args[1]) : 2;
    String what = args.length > 2 ? args[2] : "both";
    // optional: which variants (indices into variants(), comma-separated; 0 = fp32 always first)
    Map<String, QuantSpec> variants = variants();
    if (args.length > 3) {
      List<String> names = new ArrayList<>(variants.keySet());
      Map<String, QuantSpec> picked = new LinkedHashMap<>();
      picked.put(names.get(0), variants.get(names.get(0)));
      for (String i : args[3].split(",")) {
        String name = names.get(Integer.parseInt(i));
        // a variant listed twice is measured twice (paired: e.g. with two pool sizes)
        picked.put(picked.containsKey(name) ? name + " (again)" : name, variants.get(name));
      }
      variants = picked;
    }
    try (GptWeights w = weights(model)) {
      ModelConfig c = w.config();
      System.out.printf("model %s %s, intra-op threads %d, KV block %d%n", model, c, threads,
          BLOCK);
      if (what.equals("requests")) {
        variants.remove(variants.keySet().iterator().next());
        for (Map.Entry<String, QuantSpec> v : variants.entrySet()) {
          requests(w, threads, v.getKey(), v.getValue(), Integer.getInteger("bench.decode", 128),
              Integer.getInteger("bench.requests", 24));
        }
        return;
      }
      if (what.equals("prefill-chunks")) {
        variants.remove(variants.keySet().iterator().next());
        for (Map.Entry<String, QuantSpec> v : variants.entrySet()) {
          prefillChunks(w, threads, v.getKey(), v.getValue(), new int[] {512, 256, 128, 64});
        }
        return;
      }
      if (what.equals("paired")) {
        variants.remove(variants.keySet().iterator().next());
        paired(w, threads, variants, 300);
        return;
      }
      if (!what.equals("speed")) {
        accuracy(w, threads, variants);
      }
      if (!what.equals("accuracy")) {
        speed(w, threads, variants);
      }
    }
  }

  private static GptWeights weights(String model) throws Exception {
    return switch (model) {
      case "embedded" -> RandomGpt2.create(ModelConfig.embeddedDefault(), 0);
      case "gpt2-small" -> RandomGpt2.create(
          new ModelConfig(12, 12, 768, 1024, 50257, 1e-5, "gelu_new"), 0);
      case "bf16-checkpoint" -> {
        // a reference checkpoint as the tests write them: untied head, BF16 shards, loaded back
        Path dir = Files.createTempDirectory("quantbench");
        ModelConfig c = new ModelConfig(4, 4, 256, 1024, 50257, 1e-5, "gelu_new")
            .withUntiedHead();
        try (GptWeights w = RandomGpt2.create(c, 5)) {
          HfModelWriter.writeSharded(w, dir, DType.BF16, 2);
        }
        HfModelWriter.writeByteLevelTokenizer(dir);
        LoadedModel m = HfModelLoader.load(dir);
        yield (GptWeights) m.weights(); // a GPT-2 checkpoint
      }
      default -> throw new IllegalArgumentException("model: embedded, gpt2-small, bf16-checkpoint");
    };
  }

  private static void accuracy(GptWeights w, int threads, Map<String, QuantSpec> variants) {
    ModelConfig c = w.config();
    int[][] prompts = new int[PROMPTS][PROMPT_LEN];
    SplittableRandom r = new SplittableRandom(42);
    for (int[] p : prompts) {
      for (int i = 0; i < p.length; i++) {
        p[i] = r.nextInt(Math.min(c.vocabSize(), 50257));
      }
    }
    int blocksPerSeq = (PROMPT_LEN + GEN + BLOCK) / BLOCK;
    int[][] tables = new int[PROMPTS][blocksPerSeq];
    for (int s = 0; s < PROMPTS; s++) {
      for (int b = 0; b < blocksPerSeq; b++) {
        tables[s][b] = s * blocksPerSeq + b;
      }
    }
    int blocks = PROMPTS * blocksPerSeq;
    int[][] reference = null;
    float[][][] refLogits = null;
    System.out.println("| variant | greedy agreement | mean abs delta logprob | top-5 overlap |"
        + " first divergence (token index per prompt) |");
    System.out.println("|---|---:|---:|---:|---|");
    for (Map.Entry<String, QuantSpec> v : variants.entrySet()) {
      try (OnnxModelRunner runner = OnnxModelRunner.create(w, BLOCK, blocks, threads, Map.of(),
          v.getValue())) {
        int[][] greedy = greedy(runner, prompts, tables);
        if (reference == null) {
          reference = greedy;
          refLogits = teacherForced(runner, prompts, reference, tables);
          continue;
        }
        float[][][] logits = teacherForced(runner, prompts, reference, tables);
        double agreement = 0;
        int[] divergence = new int[PROMPTS];
        double delta = 0;
        double overlap = 0;
        for (int s = 0; s < PROMPTS; s++) {
          int same = 0;
          while (same < GEN && greedy[s][same] == reference[s][same]) {
            same++;
          }
          divergence[s] = same;
          agreement += (double) same / GEN / PROMPTS;
          for (int i = 0; i < GEN; i++) {
            int token = reference[s][i];
            delta += Math.abs(logprob(refLogits[s][i], token) - logprob(logits[s][i], token))
                / (PROMPTS * GEN);
            overlap += overlap(top5(refLogits[s][i]), top5(logits[s][i])) / (PROMPTS * GEN);
          }
        }
        System.out.printf("| %s | %.1f%% | %.4f | %.1f%% | %s |%n", v.getKey(), 100 * agreement,
            delta, 100 * overlap, Arrays.toString(divergence));
      }
    }
  }

  /** GEN greedy tokens after each prompt, all prompts in one batch per step. */
  private static int[][] greedy(OnnxModelRunner runner, int[][] prompts, int[][] tables) {
    int[][] out = new int[prompts.length][GEN];
    List<ForwardBatch.Seq> batch = new ArrayList<>();
    for (int s = 0; s < prompts.length; s++) {
      batch.add(new ForwardBatch.Seq(prompts[s], 0, tables[s]));
    }
    float[][] rows = runner.forward(new ForwardBatch(batch));
    for (int i = 0; i < GEN; i++) {
      batch.clear();
      for (int s = 0; s < prompts.length; s++) {
        out[s][i] = OnnxModelRunnerTest.argmax(rows[s]);
        batch.add(new ForwardBatch.Seq(new int[] {out[s][i]}, PROMPT_LEN + i, tables[s]));
      }
      if (i + 1 < GEN) {
        rows = runner.forward(new ForwardBatch(batch));
      }
    }
    return out;
  }

  /** [prompt][i]: logits predicting continuation token i, given prompt + continuation[0, i). */
  private static float[][][] teacherForced(OnnxModelRunner runner, int[][] prompts,
      int[][] continuation, int[][] tables) {
    float[][][] out = new float[prompts.length][][];
    for (int s = 0; s < prompts.length; s++) {
      int[] all = new int[PROMPT_LEN + GEN - 1];
      System.arraycopy(prompts[s], 0, all, 0, PROMPT_LEN);
      System.arraycopy(continuation[s], 0, all, PROMPT_LEN, GEN - 1);
      float[][] rows = runner.forward(new ForwardBatch(List.of(
          new ForwardBatch.Seq(all, 0, tables[s], true))));
      out[s] = Arrays.copyOfRange(rows, PROMPT_LEN - 1, PROMPT_LEN - 1 + GEN);
    }
    return out;
  }

  private static double logprob(float[] logits, int token) {
    double max = Double.NEGATIVE_INFINITY;
    for (float l : logits) {
      max = Math.max(max, l);
    }
    double sum = 0;
    for (float l : logits) {
      sum += Math.exp(l - max);
    }
    return logits[token] - max - Math.log(sum);
  }

  private static int[] top5(float[] logits) {
    int[] best = new int[5];
    Arrays.fill(best, -1);
    for (int t = 0; t < logits.length; t++) {
      for (int j = 0; j < 5; j++) {
        if (best[j] < 0 || logits[t] > logits[best[j]]) {
          System.arraycopy(best, j, best, j + 1, 4 - j);
          best[j] = t;
          break;
        }
      }
    }
    return best;
  }

  private static double overlap(int[] a, int[] b) {
    int n = 0;
    for (int x : a) {
      for (int y : b) {
        n += x == y ? 1 : 0;
      }
    }
    return n / 5.0;
  }

  private static void speed(GptWeights w, int threads, Map<String, QuantSpec> variants)
      throws Exception {
    ModelConfig c = w.config();
    double copy = DecodeStepBench.copyBandwidth(threads);
    double copyCpu = copyBandwidthCpu();
    System.out.printf("copy bandwidth (System.arraycopy of 512 MiB, %d threads, best of 5, read +"
        + " written): %.1f GB/s wall; one thread by its CPU time: %.1f GB/s%n", threads,
        copy / 1e9, copyCpu / 1e9);
    int blocks = PREFILL / BLOCK + (DECODE_CONTEXT + 1 + BLOCK - 1) / BLOCK;
    int[] prefillTable = new int[PREFILL / BLOCK];
    int[] decodeTable = new int[(DECODE_CONTEXT + 1 + BLOCK - 1) / BLOCK];
    for (int b = 0; b < prefillTable.length; b++) {
      prefillTable[b] = b;
    }
    for (int b = 0; b < decodeTable.length; b++) {
      decodeTable[b] = prefillTable.length + b;
    }
    long kvBytes = (DECODE_CONTEXT + 1L) * 2 * c.nLayer() * c.nEmbd() * 4;
    // two rounds over all variants, each variant's better round reported: on a shared machine
    // a neighbour's burst then costs one round of one variant, not the comparison
    Map<String, double[]> best = new LinkedHashMap<>();
    for (int round = 0; round < ROUNDS; round++) {
      for (Map.Entry<String, QuantSpec> v : variants.entrySet()) {
        try (OnnxModelRunner runner = OnnxModelRunner.create(w, BLOCK, blocks, threads, Map.of(),
            v.getValue())) {
          double[] prefill = prefill(runner, prefillTable, c);
          double[] step = decode(runner, decodeTable, 30);
          double[] r = {1e3 / step[0], 1e3 / step[1], prefill[0], prefill[1]};
          best.merge(v.getKey(), r, (a, b) -> {
            double[] m = new double[a.length];
            for (int i = 0; i < a.length; i++) {
              m[i] = Math.max(a[i], b[i]);
            }
            return m;
          });
        }
      }
    }
    System.out.println("| variant | bytes/token MB | roofline tok/s wall / CPU | decode tok/s"
        + " wall / CPU | roofline / decode (CPU) | with block sums: MB, roofline / decode (CPU)"
        + " | prefill 512 tok/s wall / CPU |");
    System.out.println("|---|---:|---:|---:|---:|---:|---:|");
    for (Map.Entry<String, QuantSpec> v : variants.entrySet()) {
      long bytes = stepBytes(c, v.getValue()) + kvBytes;
      long read = bytes + blockSumBytes(c, v.getValue());
      double[] r = best.get(v.getKey());
      System.out.printf("| %s | %.1f | %.0f / %.0f | %.1f / %.1f | %.2f | %.1f, %.2f | %.0f / %.0f |%n",
          v.getKey(), bytes / 1e6, copy / bytes, copyCpu / bytes, r[0], r[1],
          copyCpu / bytes / r[1], read / 1e6, copyCpu / read / r[1], r[2], r[3]);
    }
  }

  /**
   * One 512-token prompt prefilled whole and in chunks of each of {@code chunks} tokens (as
   * {@code --prefill-chunk-size} splits it), the chunk sizes interleaved: median, min and max
   * wall ms of 7 rounds after 2 warm-up rounds. Whether a smaller M makes the linear kernels
   * faster per token than one 512-row GEMM.
   */
  private static void prefillChunks(GptWeights w, int threads, String name, QuantSpec q,
      int[] chunks) {
    int[] table = new int[PREFILL / BLOCK];
    for (int b = 0; b < table.length; b++) {
      table[b] = b;
    }
    int[] prompt = new int[PREFILL];
    for (int i = 0; i < PREFILL; i++) {
      prompt[i] = Math.floorMod(i * 31 + 100, Math.min(w.config().vocabSize(), 50257));
    }
    try (OnnxModelRunner runner = OnnxModelRunner.create(w, BLOCK, table.length, threads,
        Map.of(), q)) {
      double[][] ms = new double[chunks.length][7];
      for (int r = -2; r < 7; r++) {
        for (int k = 0; k < chunks.length; k++) {
          long t0 = System.nanoTime();
          for (int from = 0; from < PREFILL; from += chunks[k]) {
            runner.forward(new ForwardBatch(List.of(new ForwardBatch.Seq(
                Arrays.copyOfRange(prompt, from, Math.min(PREFILL, from + chunks[k])), from,
                table))));
          }
          if (r >= 0) {
            ms[k][r] = (System.nanoTime() - t0) / 1e6;
          }
        }
      }
      for (int k = 0; k < chunks.length; k++) {
        Arrays.sort(ms[k]);
        System.out.printf("%s: %d tokens in chunks of %d: median %.1f ms (min %.1f, max %.1f)%n",
            name, PREFILL, chunks[k], ms[k][3], ms[k][0], ms[k][6]);
      }
    }
  }

  /**
   * Decode as a server drives it, one request after another: a 16-token prompt prefilled, then
   * {@code decode} steps with the context growing and a fresh block taken every 16 tokens, each
   * request in blocks not used before while the pool lasts (as a prefix cache keeps the earlier
   * requests' blocks). Per decode step: median and mean thread CPU and wall, all requests.
   */
  private static void requests(GptWeights w, int threads, String name, QuantSpec q, int decode,
      int requests) {
    int perRequest = (16 + decode + BLOCK - 1) / BLOCK;
    int poolBlocks = Math.max(perRequest, Integer.getInteger("bench.poolBlocks", 455));
    try (OnnxModelRunner runner = OnnxModelRunner.create(w, BLOCK, poolBlocks, threads, Map.of(),
        q)) {
      List<Double> cpu = new ArrayList<>();
      List<Double> wall = new ArrayList<>();
      int next = 0;
      for (int r = -4; r < requests; r++) {
        if (next + perRequest > poolBlocks) {
          next = 0;
        }
        int[] table = new int[perRequest];
        for (int b = 0; b < perRequest; b++) {
          table[b] = next + b;
        }
        next += perRequest;
        int[] prompt = new int[16];
        for (int i = 0; i < 16; i++) {
          prompt[i] = Math.floorMod(r * 7919 + i * 131 + 11, 50000);
        }
        runner.forward(new ForwardBatch(List.of(new ForwardBatch.Seq(prompt, 0, table))));
        for (int t = 0; t < decode; t++) {
          int past = 16 + t;
          int[] used = Arrays.copyOf(table, (past + 1 + BLOCK - 1) / BLOCK);
          long c0 = THREADS.getCurrentThreadCpuTime();
          long t0 = System.nanoTime();
          runner.forward(new ForwardBatch(List.of(new ForwardBatch.Seq(
              new int[] {Math.floorMod(t * 131 + r, 50000)}, past, used))));
          if (r >= 0) {
            wall.add((System.nanoTime() - t0) / 1e6);
            cpu.add((THREADS.getCurrentThreadCpuTime() - c0) / 1e6);
          }
        }
      }
      double[] c = cpu.stream().mapToDouble(Double::doubleValue).sorted().toArray();
      double[] m = wall.stream().mapToDouble(Double::doubleValue).sorted().toArray();
      System.out.printf("%s: %d requests of 16 + %d tokens, pool %d blocks: decode step CPU"
          + " median %.3f mean %.3f ms, wall median %.3f mean %.3f ms (%.1f tok/s by the mean"
          + " wall)%n", name, requests, decode, poolBlocks, c[c.length / 2],
          Arrays.stream(c).average().orElseThrow(), m[m.length / 2],
          Arrays.stream(m).average().orElseThrow(),
          1e3 / Arrays.stream(m).average().orElseThrow());
    }
  }

  /**
   * Batch-1 decode of the variants side by side: every runner open at once, one decode step of
   * each in turn (the order rotating), {@code rounds} times. A slow stretch of a shared machine
   * then lands on all of them alike, so differences of a few percent, which two separate runs
   * cannot tell from noise, show: reported as each variant's median step (thread CPU) and the
   * median over rounds of its step ÷ the first variant's step in the same round.
   */
  private static void paired(GptWeights w, int threads, Map<String, QuantSpec> variants,
      int rounds) {
    ModelConfig c = w.config();
    int[] table = new int[(DECODE_CONTEXT + 1 + BLOCK - 1) / BLOCK];
    Arrays.setAll(table, b -> b);
    List<String> names = new ArrayList<>(variants.keySet());
    List<OnnxModelRunner> runners = new ArrayList<>();
    try {
      // -Dbench.poolBlocks=N,M,...: variant i's pool holds that many blocks (as a server's,
      // sized by memory), not only the table's; the variants may then repeat one spec
      String[] pools = System.getProperty("bench.poolBlocks", "").split(",");
      int i = 0;
      for (QuantSpec q : variants.values()) {
        int blocks = i < pools.length && !pools[i].isBlank()
            ? Math.max(table.length, Integer.parseInt(pools[i].strip())) : table.length;
        runners.add(OnnxModelRunner.create(w, BLOCK, blocks, threads, Map.of(), q));
        i++;
      }
      int n = runners.size();
      double[][] cpu = new double[n][rounds];
      for (int r = -10; r < rounds; r++) {
        for (int j = 0; j < n; j++) {
          int v = Math.floorMod(j + r, n);
          long c0 = THREADS.getCurrentThreadCpuTime();
          runners.get(v).forward(new ForwardBatch(List.of(new ForwardBatch.Seq(
              new int[] {Math.floorMod(r * 131 + 7, Math.min(c.vocabSize(), 16384))},
              DECODE_CONTEXT, table))));
          if (r >= 0) {
            cpu[v][r] = (THREADS.getCurrentThreadCpuTime() - c0) / 1e6;
          }
        }
      }
      System.out.printf("%d rounds, one decode step of each variant per round at context %d%n",
          rounds, DECODE_CONTEXT);
      System.out.println("| variant | median step ms (CPU) | tok/s | step / first variant's, median"
          + " of rounds |");
      System.out.println("|---|---:|---:|---:|");
      for (int v = 0; v < n; v++) {
        double[] ratio = new double[rounds];
        for (int r = 0; r < rounds; r++) {
          ratio[r] = cpu[v][r] / cpu[0][r];
        }
        Arrays.sort(ratio);
        double[] sorted = cpu[v].clone();
        Arrays.sort(sorted);
        System.out.printf("| %s | %.3f | %.1f | %.3f |%n", names.get(v), sorted[rounds / 2],
            1e3 / sorted[rounds / 2], ratio[rounds / 2]);
      }
    } finally {
      runners.forEach(OnnxModelRunner::close);
    }
  }

  /**
   * Bytes per CPU-second one thread moves with {@code System.arraycopy} (512 MiB, read + written,
   * best of 5): the roofline's bandwidth measured the way the decode steps are, by the thread's
   * own CPU time, so that neighbours' load on a shared machine leaves both sides alike.
   */
  private static double copyBandwidthCpu() {
    long[] from = new long[64 << 20];
    long[] to = new long[from.length];
    java.util.Arrays.fill(from, 5);
    java.util.Arrays.fill(to, 1);
    double best = Double.MAX_VALUE;
    for (int r = 0; r < 5; r++) {
      long c0 = THREADS.getCurrentThreadCpuTime();
      System.arraycopy(from, 0, to, 0, from.length);
      best = Math.min(best, (THREADS.getCurrentThreadCpuTime() - c0) / 1e9);
    }
    return 2.0 * from.length * 8 / best;
  }

  /**
   * {wall ms, calling thread's CPU ms} of a batch-1 decode step at DECODE_CONTEXT, medians after
   * warm-up steps. With one intra-op thread ONNX Runtime computes on the calling thread, so its
   * CPU time is the step's compute time whatever the neighbours on a shared machine take.
   */
  private static double[] decode(OnnxModelRunner runner, int[] table, int steps) {
    double[] ms = new double[steps];
    double[] cpu = new double[steps];
    for (int i = -10; i < steps; i++) {
      long c0 = THREADS.getCurrentThreadCpuTime();
      long t0 = System.nanoTime();
      runner.forward(new ForwardBatch(List.of(new ForwardBatch.Seq(
          new int[] {(i * 131 + 7) & 0x3fff}, DECODE_CONTEXT, table))));
      if (i >= 0) {
        ms[i] = (System.nanoTime() - t0) / 1e6;
        cpu[i] = (THREADS.getCurrentThreadCpuTime() - c0) / 1e6;
      }
    }
    Arrays.sort(ms);
    Arrays.sort(cpu);
    return new double[] {ms[steps / 2], cpu[steps / 2]};
  }

  /** {wall, thread CPU} tokens/s of one 512-token prefill, medians of 5 after 3 warm-ups. */
  private static double[] prefill(OnnxModelRunner runner, int[] table, ModelConfig c) {
    double[] tps = new double[5];
    double[] cpu = new double[5];
    for (int r = -3; r < tps.length; r++) {
      int[] prompt = new int[PREFILL];
      for (int i = 0; i < PREFILL; i++) {
        prompt[i] = Math.floorMod(i * 31 + r * 977 + 100, Math.min(c.vocabSize(), 50257));
      }
      long c0 = THREADS.getCurrentThreadCpuTime();
      long t0 = System.nanoTime();
      runner.forward(new ForwardBatch(List.of(new ForwardBatch.Seq(prompt, 0, table))));
      if (r >= 0) {
        tps[r] = PREFILL / ((System.nanoTime() - t0) / 1e9);
        cpu[r] = PREFILL / ((THREADS.getCurrentThreadCpuTime() - c0) / 1e9);
      }
    }
    Arrays.sort(tps);
    Arrays.sort(cpu);
    return new double[] {tps[tps.length / 2], cpu[cpu.length / 2]};
  }

  /**
   * Bytes of weights a batch-1 decode step reads under {@code q}: every linear layer in its
   * format, biases and norms in fp32, one row of each embedding, and the LM head (fp32 or
   * quantized).
   */
  static long stepBytes(ModelConfig c, QuantSpec q) {
    return stepBytes(c, q, Float.BYTES);
  }

  /**
   * As above for a graph whose floats (dense weights, biases, norms, embeddings, and
   * MatMulNBits' scales, which take the activations' type) are {@code floatBytes} wide: 4 for
   * fp32, 2 for the fp16 and bf16 graphs CUDA runs.
   */
  static long stepBytes(ModelConfig c, QuantSpec q, int floatBytes) {
    long e = c.nEmbd();
    long inner = c.nInner();
    long denseHead = q.lmHead() ? 0 : floatBytes * c.vocabSize() * e;
    // per layer the four linear biases and two norms' weights and biases; then a row each of
    // the two embeddings and the final norm's weight and bias
    return overMatrices(c, q, (spec, k, n) -> linear(spec, k, n, floatBytes)) + denseHead
        + c.nLayer() * floatBytes * ((3 * e + e + inner + e) + 4 * e) + 4 * floatBytes * e;
  }

  /**
   * The bytes a decode step reads beyond the format's: MLAS's int8-compute kernels (accuracy
   * level 4, x86) keep one float per block of each quantized weight matrix, the block's share of
   * the zero-point correction, and read them every step in a pass of their own (an fp32 GEMV
   * over (K / block) x N floats; docs/benchmarks/journal/2026-11-21-to-28.md, "Where each engine's time goes").
   */
  static long blockSumBytes(ModelConfig c, QuantSpec q) {
    return overMatrices(c, q, (spec, k, n) -> spec.quantized() && spec.accuracyLevel() == 4
        ? 4 * n * (k / spec.blockSize()) : 0);
  }

  /** Bytes of one K x N weight matrix stored as {@code q} says. */
  private interface MatrixBytes {
    long of(QuantSpec q, long k, long n);
  }

  /**
   * {@code bytes} summed over the quantizable matrices a decode step reads: each layer's four
   * linear weights, and the LM head when it is quantized (under its own spec).
   */
  private static long overMatrices(ModelConfig c, QuantSpec q, MatrixBytes bytes) {
    long e = c.nEmbd();
    long inner = c.nInner();
    // each matrix under the spec of its own K (an auto block size resolved)
    long layer = bytes.of(q.forWeight(e), e, 3 * e) + bytes.of(q.forWeight(e), e, e)
        + bytes.of(q.forWeight(e), e, inner) + bytes.of(q.forWeight(inner), inner, e);
    long head = q.lmHead() ? bytes.of(q.forHead(e), e, c.vocabSize()) : 0;
    return c.nLayer() * layer + head;
  }

  private static long linear(QuantSpec q, long k, long n, int floatBytes) {
    if (!q.quantized()) {
      return floatBytes * k * n;
    }
    long blocks = k / q.blockSize();
    int bits = q.mode().bits();
    return n * blocks * (q.blockSize() * bits / 8) + floatBytes * n * blocks
        + (q.zeroPoints() ? n * ((blocks * bits + 7) / 8) : 0);
  }
}
