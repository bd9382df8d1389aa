package dev.radixserve.model;

import dev.radixserve.model.graph.PagedGpt2Graph;
import dev.radixserve.model.ort.ElementType;
import dev.radixserve.model.ort.MemoryInfo;
import dev.radixserve.model.ort.OrtEnv;
import dev.radixserve.model.ort.OrtSession;
import dev.radixserve.model.ort.OrtValue;
import dev.radixserve.model.ort.SessionOptions;
import dev.radixserve.model.weights.GptWeights;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

/**
 * {@link ModelRunner} on ONNX Runtime's CPU provider through its C API: one {@code Run} of the
 * portable paged GPT-2 graph ({@link PagedGpt2Graph}) per step over all sequences, the new keys
 * and values then copied into the {@link KvPool}.
 *
 * <p>Weights are passed to every run as tensors over the {@link GptWeights} memory (no copy for
 * F32 weights in native memory; F16/BF16 are widened once into fp32 memory this runner owns, since
 * the portable graph is fp32 end to end). The weights must stay open until this runner is closed.
 *
 * <p>Not thread-safe: one engine thread calls {@link #forward}.
 */
public final class OnnxModelRunner implements ModelRunner {

  private final ModelConfig config;
  private final KvPool pool;
  private final WeightTensors weights;
  private final OrtEnv env;
  private final MemoryInfo cpu;
  private final OrtSession session;
  private final OrtSession.Call call;
  private final OrtValue[] cacheValues;
  private final StepInputs step = new StepInputs();
  private final OrtValue[] inputs;
  private StepTimings lastTimings = new StepTimings(0, 0, 0);
  private boolean closed;

  private OnnxModelRunner(GptWeights weights, KvPool pool, int intraOpThreads) {
    this.config = weights.config();
    this.pool = pool;
    List<AutoCloseable> opened = new ArrayList<>();
    try {
      this.cpu = track(opened, MemoryInfo.cpu());
      this.weights = track(opened, WeightTensors.of(weights, cpu));
      this.env = track(opened, OrtEnv.create("radixserve"));
      byte[] model = PagedGpt2Graph.build(config, pool.blockSize());
      try (SessionOptions options = SessionOptions.create()) {
        options.intraOpThreads(intraOpThreads).interOpThreads(1).sequentialExecution()
            .optimization(SessionOptions.Optimization.ALL);
        this.session = track(opened, OrtSession.create(env, model, options));
      }
      this.call = track(opened, session.call(PagedGpt2Graph.inputNames(config),
          PagedGpt2Graph.outputNames(config)));
      long[] cacheShape = {pool.numBlocks(), pool.blockSize(), config.nHead(), config.headDim()};
      cacheValues = new OrtValue[2 * config.nLayer()];
      for (int i = 0; i < config.nLayer(); i++) {
        cacheValues[2 * i] = track(opened,
            OrtValue.wrap(cpu, pool.keys(i), ElementType.FLOAT, cacheShape));
        cacheValues[2 * i + 1] = track(opened,
            OrtValue.wrap(cpu, pool.values(i), ElementType.FLOAT, cacheShape));
      }
    } catch (RuntimeException e) {
      closeAll(opened.reversed(), e);
      pool.close();
      throw e;
    }
    int stepCount = PagedGpt2Graph.stepInputNames().size();
    inputs = new OrtValue[stepCount + cacheValues.length + this.weights.values().length];
    System.arraycopy(cacheValues, 0, inputs, stepCount, cacheValues.length);
    System.arraycopy(this.weights.values(), 0, inputs, stepCount + cacheValues.length,
        this.weights.values().length);
  }

  /**
   * A runner with a pool of {@code numBlocks} blocks of {@code blockSize} tokens.
   *
   * @param intraOpThreads ONNX Runtime threads per operator; 0 = one per core
   */
  public static OnnxModelRunner create(GptWeights weights, int blockSize, int numBlocks,
      int intraOpThreads) {
    return new OnnxModelRunner(weights, KvPool.ofBlocks(weights.config(), blockSize, numBlocks),
        intraOpThreads);
  }

  /** A runner whose pool takes as many blocks as fit in {@code kvBudgetBytes}. */
  public static OnnxModelRunner createForBudget(GptWeights weights, int blockSize,
      long kvBudgetBytes, int intraOpThreads) {
    return new OnnxModelRunner(weights,
        KvPool.forBudget(weights.config(), blockSize, kvBudgetBytes), intraOpThreads);
  }

  @Override
  public ModelConfig config() {
    return config;
  }

  @Override
  public int blockSize() {
    return pool.blockSize();
  }

  @Override
  public int numBlocks() {
    return pool.numBlocks();
  }

  /** The pool this runner writes (read access for tests and diagnostics). */
  public KvPool kvPool() {
    return pool;
  }

  /** Timings of the last completed {@link #forward}. */
  public StepTimings lastTimings() {
    return lastTimings;
  }

  @Override
  public float[][] forward(ForwardBatch batch) {
    if (closed) {
      throw new IllegalStateException("the model runner is closed");
    }
    long t0 = System.nanoTime();
    BatchValidator.check(batch, config, pool.blockSize(), pool.numBlocks());
    for (ForwardBatch.BlockCopy c : batch.copies()) {
      pool.copyBlock(c.srcBlock(), c.dstBlock(), c.slots());
    }
    step.fill(batch, pool.blockSize());
    OrtValue[] stepValues = step.values(cpu);
    OrtValue[] outputs = null;
    long t1;
    long t2;
    try {
      System.arraycopy(stepValues, 0, inputs, 0, stepValues.length);
      t1 = System.nanoTime();
      outputs = call.run(inputs);
      t2 = System.nanoTime();
      float[][] logits = readLogits(outputs[0], batch.logitRows());
      writeKv(outputs, batch);
      lastTimings = new StepTimings(t1 - t0, t2 - t1, System.nanoTime() - t2);
      return logits;
    } finally {
      for (OrtValue v : stepValues) {
        v.close();
      }
      if (outputs != null) {
        for (OrtValue v : outputs) {
          v.close();
        }
      }
    }
  }

  private float[][] readLogits(OrtValue value, int rows) {
    int vocab = config.vocabSize();
    MemorySegment data = value.data((long) rows * vocab * Float.BYTES);
    float[][] logits = new float[rows][vocab];
    for (int s = 0; s < rows; s++) {
      MemorySegment.copy(data, ValueLayout.JAVA_FLOAT, (long) s * vocab * Float.BYTES,
          logits[s], 0, vocab);
    }
    return logits;
  }

  private void writeKv(OrtValue[] outputs, ForwardBatch batch) {
    List<ForwardBatch.Seq> seqs = batch.seqs();
    for (int layer = 0; layer < config.nLayer(); layer++) {
      long bytes = (long) batch.totalNewTokens() * config.nEmbd() * Float.BYTES; // [T, H, D]
      MemorySegment k = outputs[1 + 2 * layer].data(bytes);
      MemorySegment v = outputs[2 + 2 * layer].data(bytes);
      for (int i = 0; i < seqs.size(); i++) {
        ForwardBatch.Seq s = seqs.get(i);
        pool.write(layer, k, v, step.tokenStart(i), s.newTokens().length, s.pastLen(),
            s.blockTable());
      }
    }
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    List<AutoCloseable> owned = new ArrayList<>(List.of(call, session));
    owned.addAll(List.of(cacheValues));
    owned.addAll(List.of(weights, env, cpu, step, pool));
    closeAll(owned, null);
  }

  private static <T extends AutoCloseable> T track(List<AutoCloseable> opened, T resource) {
    opened.add(resource);
    return resource;
  }

  private static void closeAll(List<AutoCloseable> resources, RuntimeException primary) {
    RuntimeException failure = primary;
    for (AutoCloseable r : resources) {
      try {
        r.close();
      } catch (Exception e) {
        if (failure == null) {
          failure = new IllegalStateException("releasing " + r + " failed", e);
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    if (primary == null && failure != null) {
      throw failure;
    }
  }
}
