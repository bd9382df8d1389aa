package dev.radixserve.model;

import dev.radixserve.model.attention.PagedAttentionOp;
import dev.radixserve.model.graph.GraphDtype;
import dev.radixserve.model.graph.KvDtype;
import dev.radixserve.model.graph.OnnxGraph;
import dev.radixserve.model.graph.PagedGraph;
import dev.radixserve.model.ort.ElementType;
import dev.radixserve.model.ort.MemoryInfo;
import dev.radixserve.model.ort.OrtEnv;
import dev.radixserve.model.ort.OrtSession;
import dev.radixserve.model.ort.OrtValue;
import dev.radixserve.model.ort.SessionOptions;
import dev.radixserve.model.quant.QuantSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * {@link ModelRunner} on ONNX Runtime's CPU provider through its C API: one {@code Run} of the
 * model family's paged graph ({@link PagedGraph}) per step over all sequences. Each layer's attention
 * is radixserve's CPU kernel for {@code com.microsoft.PagedAttention} ({@link PagedAttentionOp}),
 * which reads the {@link KvPool} in place and writes the new keys and values into it; the cache
 * outputs are bound to the pool's own buffers, so nothing is copied back.
 *
 * <p>Weights are the graph's initializers, written once into a file that ONNX Runtime maps at
 * session creation ({@link WeightsFile}; it pre-packs the MatMul weights into memory of its own
 * and unmaps them, and reads the rest where they lie). F16/BF16 weights are widened to fp32 for
 * that, one tensor at a time.
 *
 * <p>Not thread-safe: one engine thread calls {@link #forward}.
 */
public final class OnnxModelRunner implements ModelRunner {

  private final ModelShape config;
  private final KvPool pool;
  private final OrtEnv env;
  private final MemoryInfo cpu;
  private final OrtSession session;
  /** Reads ahead the embedding rows of the tokens a step will read (its table stays on disk). */
  private final RowPrefetch rows;
  private final OrtSession.Call call;
  private final OrtValue[] cacheValues;
  private final StepInputs step = new StepInputs();
  private final OrtValue[] inputs;
  private final OrtValue[] bound;
  /** The rows {@link #forwardReusingRows} hands out again. */
  private final LogitRows reused = new LogitRows();
  private StepTimings lastTimings = new StepTimings(0, 0, 0);
  private boolean closed;

  private OnnxModelRunner(ModelWeights weights, KvPool pool, int intraOpThreads,
      Map<String, String> sessionConfig, QuantSpec quant, WeightStore store) {
    this.config = weights.config();
    this.pool = pool;
    List<AutoCloseable> opened = new ArrayList<>();
    try {
      this.cpu = Resources.track(opened, MemoryInfo.cpu());
      this.env = Resources.track(opened, OrtEnv.create("radixserve"));
      OnnxGraph graph = weights.graph().build(pool.blockSize(), GraphDtype.FLOAT32, quant,
          pool.dtype());
      try (SessionOptions options = SessionOptions.create()) {
        options.intraOpThreads(intraOpThreads).interOpThreads(1).sequentialExecution()
            .optimization(SessionOptions.Optimization.ALL)
            .addCustomOpDomain(PagedAttentionOp.domain());
        sessionConfig.forEach(options::config);
        WeightsFile.Opened file = WeightsFile.open(env, graph, weights.tensors(), options, store);
        this.session = Resources.track(opened, file.session());
        this.rows = Resources.track(opened, file.rows());
      }
      NativeHeap.trim(); // the weights made for the session and its transient copies are freed
      this.call = Resources.track(opened, session.call(PagedGraph.inputNames(config),
          PagedGraph.outputNames(config)));
      long[] cacheShape = {pool.numBlocks(), pool.blockSize(), config.kvHeads(),
          pool.dtype().cacheLastDim(config.headDim())};
      ElementType cacheType = pool.dtype().element();
      cacheValues = new OrtValue[2 * config.nLayer()];
      for (int i = 0; i < config.nLayer(); i++) {
        cacheValues[2 * i] = Resources.track(opened,
            OrtValue.wrap(cpu, pool.keys(i), cacheType, cacheShape));
        cacheValues[2 * i + 1] = Resources.track(opened,
            OrtValue.wrap(cpu, pool.values(i), cacheType, cacheShape));
      }
    } catch (RuntimeException e) {
      Resources.closeAll(opened.reversed(), e);
      pool.close();
      throw e;
    }
    int stepCount = PagedGraph.stepInputNames().size();
    inputs = new OrtValue[stepCount + cacheValues.length];
    System.arraycopy(cacheValues, 0, inputs, stepCount, cacheValues.length);
    // logits: allocated by ONNX Runtime; each cache output: the cache input's own buffer
    bound = new OrtValue[1 + cacheValues.length];
    System.arraycopy(cacheValues, 0, bound, 1, cacheValues.length);
  }

  /**
   * A runner with a pool of {@code numBlocks} blocks of {@code blockSize} tokens.
   *
   * @param intraOpThreads ONNX Runtime threads per operator; 0 = one per core
   */
  public static OnnxModelRunner create(ModelWeights weights, int blockSize, int numBlocks,
      int intraOpThreads) {
    return create(weights, blockSize, numBlocks, intraOpThreads, Map.of());
  }

  /**
   * As {@link #create(ModelWeights, int, int, int)}, with extra ONNX Runtime session config entries
   * ({@code AddSessionConfigEntry}; e.g. {@code session.disable_prepacking=1} to measure what
   * pre-packed initializers buy).
   */
  public static OnnxModelRunner create(ModelWeights weights, int blockSize, int numBlocks,
      int intraOpThreads, Map<String, String> sessionConfig) {
    return create(weights, blockSize, numBlocks, intraOpThreads, sessionConfig, QuantSpec.none());
  }

  /**
   * As {@link #create(ModelWeights, int, int, int, Map)}, with the linear layers quantized at load
   * as {@code quant} says (ONNX Runtime's {@code MatMulNBits}).
   *
   * @throws IllegalArgumentException if the spec cannot quantize this model (a block size that
   *     does not divide a layer's input width), before any native resource is made
   */
  public static OnnxModelRunner create(ModelWeights weights, int blockSize, int numBlocks,
      int intraOpThreads, Map<String, String> sessionConfig, QuantSpec quant) {
    return create(weights, blockSize, numBlocks, intraOpThreads, sessionConfig, quant,
        KvDtype.FLOAT32);
  }

  /**
   * As {@link #create(ModelWeights, int, int, int, Map, QuantSpec)}, the KV pool holding
   * {@code kv} ({@code --kv-cache-dtype}).
   */
  public static OnnxModelRunner create(ModelWeights weights, int blockSize, int numBlocks,
      int intraOpThreads, Map<String, String> sessionConfig, QuantSpec quant, KvDtype kv) {
    return create(weights, blockSize, numBlocks, intraOpThreads, sessionConfig, quant, kv,
        WeightStore.temporary());
  }

  /**
   * As {@link #create(ModelWeights, int, int, int, Map, QuantSpec, KvDtype)}, the weights file
   * that ONNX Runtime maps written to (or, cached, found in) {@code store}.
   */
  public static OnnxModelRunner create(ModelWeights weights, int blockSize, int numBlocks,
      int intraOpThreads, Map<String, String> sessionConfig, QuantSpec quant, KvDtype kv,
      WeightStore store) {
    check(weights, blockSize, quant);
    return new OnnxModelRunner(weights,
        KvPool.ofBlocks(weights.config(), blockSize, numBlocks, kv), intraOpThreads,
        sessionConfig, quant, store);
  }

  /** A runner whose pool takes as many blocks as fit in {@code kvBudgetBytes}. */
  public static OnnxModelRunner createForBudget(ModelWeights weights, int blockSize,
      long kvBudgetBytes, int intraOpThreads) {
    return createForBudget(weights, blockSize, kvBudgetBytes, intraOpThreads, QuantSpec.none());
  }

  /** As {@link #createForBudget(ModelWeights, int, long, int)}, quantized as {@code quant} says. */
  public static OnnxModelRunner createForBudget(ModelWeights weights, int blockSize,
      long kvBudgetBytes, int intraOpThreads, QuantSpec quant) {
    return createForBudget(weights, blockSize, kvBudgetBytes, intraOpThreads, quant,
        KvDtype.FLOAT32);
  }

  /** As above, the KV pool holding {@code kv}: a budget holds more blocks of a narrower type. */
  public static OnnxModelRunner createForBudget(ModelWeights weights, int blockSize,
      long kvBudgetBytes, int intraOpThreads, QuantSpec quant, KvDtype kv) {
    return createForBudget(weights, blockSize, kvBudgetBytes, intraOpThreads, quant, kv,
        WeightStore.temporary());
  }

  /** As above, the weights file written to (or, cached, found in) {@code store}. */
  public static OnnxModelRunner createForBudget(ModelWeights weights, int blockSize,
      long kvBudgetBytes, int intraOpThreads, QuantSpec quant, KvDtype kv, WeightStore store) {
    check(weights, blockSize, quant);
    return new OnnxModelRunner(weights,
        KvPool.forBudget(weights.config(), blockSize, kvBudgetBytes, kv), intraOpThreads,
        Map.of(), quant, store);
  }

  /**
   * Whether {@code quant} can quantize a model of {@code config}: builds its graph (cheap: no
   * weight is touched) so the refusal names the layer.
   *
   * @throws IllegalArgumentException with the reason when it cannot
   */
  public static void check(ModelWeights weights, int blockSize, QuantSpec quant) {
    weights.graph().build(blockSize, GraphDtype.FLOAT32, quant);
  }

  @Override
  public ModelShape config() {
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

  @Override
  public void prefetchRows(int[] ids, int from, int to) {
    if (!closed) {
      rows.rows(ids, from, to);
    }
  }

  @Override
  public Optional<KvBlockIo> blockIo() {
    return Optional.of(pool);
  }

  /** Timings of the last completed {@link #forward}. */
  public StepTimings lastTimings() {
    return lastTimings;
  }

  @Override
  public float[][] forward(ForwardBatch batch) {
    return forward(batch, new LogitRows());
  }

  @Override
  public float[][] forwardReusingRows(ForwardBatch batch) {
    return forward(batch, reused);
  }

  private float[][] forward(ForwardBatch batch, LogitRows out) {
    if (closed) {
      throw new IllegalStateException("the model runner is closed");
    }
    long t0 = System.nanoTime();
    BatchValidator.check(batch, config, pool.blockSize(), pool.numBlocks());
    for (ForwardBatch.Seq s : batch.seqs()) {
      // a prefill's (or a draft's) rows, read in parallel rather than a fault at a time; a
      // decode token's were asked for when it was sampled (prefetchRows)
      if (s.newTokens().length > 1) {
        rows.rows(s.newTokens(), 0, s.newTokens().length);
      }
    }
    for (ForwardBatch.BlockCopy c : batch.copies()) {
      pool.copyBlock(c.srcBlock(), c.dstBlock(), c.slots());
    }
    step.fill(batch, pool.blockSize(), config.nPositions());
    OrtValue[] stepValues = step.values(cpu);
    OrtValue logits = null;
    try {
      System.arraycopy(stepValues, 0, inputs, 0, stepValues.length);
      long t1 = System.nanoTime();
      logits = call.run(inputs, bound)[0];
      long t2 = System.nanoTime();
      int vocab = config.vocabSize();
      float[][] rows = out.copy(logits.data((long) batch.logitRows() * vocab * Float.BYTES),
          batch.logitRows(), vocab);
      lastTimings = new StepTimings(t1 - t0, t2 - t1, System.nanoTime() - t2);
      return rows;
    } finally {
      for (OrtValue v : stepValues) {
        v.close();
      }
      if (logits != null) {
        logits.close();
      }
    }
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    List<AutoCloseable> owned = new ArrayList<>(List.of(call, session, rows));
    owned.addAll(List.of(cacheValues));
    owned.addAll(List.of(env, cpu, step, pool));
    Resources.closeAll(owned, null);
  }
}
