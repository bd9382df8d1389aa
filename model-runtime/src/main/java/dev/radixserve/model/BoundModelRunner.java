package dev.radixserve.model;

import dev.radixserve.model.attention.PagedAttentionOp;
import dev.radixserve.model.graph.GraphDtype;
import dev.radixserve.model.graph.OnnxGraph;
import dev.radixserve.model.graph.PagedGraph;
import dev.radixserve.model.quant.QuantSpec;
import dev.radixserve.model.ort.Allocator;
import dev.radixserve.model.ort.CudaProvider;
import dev.radixserve.model.ort.ElementType;
import dev.radixserve.model.ort.IoBinding;
import dev.radixserve.model.ort.MemoryInfo;
import dev.radixserve.model.ort.OrtEnv;
import dev.radixserve.model.ort.OrtSession;
import dev.radixserve.model.ort.OrtValue;
import dev.radixserve.model.ort.SessionOptions;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * {@link ModelRunner} over ONNX Runtime's IOBinding, with the KV pool in the memory of the
 * session's device ({@link DeviceKvPool}): the runner for {@code --device cuda}, and on the CPU
 * the same code with the CPU allocator (the test suite runs it in fp32 and in fp16 with the fp16
 * stand-in kernel).
 *
 * <p>Per step the binding gets the seven small step inputs (host memory: ONNX Runtime copies them
 * up) and a host buffer for the logits of the rows sampling needs; the caches stay bound, input
 * and output, to the pool's tensors from creation on, so no KV byte crosses the bus.
 * {@link #lastTraffic()} reports what a step bound.
 *
 * <p>The CPU default remains {@link OnnxModelRunner} (host pool in huge pages, plain {@code Run}):
 * it is as fast and gives the same bits as before this runner existed.
 *
 * <p>Not thread-safe: one engine thread calls {@link #forward}.
 */
public final class BoundModelRunner implements ModelRunner {

  /** Bytes a step bound from host memory: step inputs up, logits down. */
  public record Traffic(long upBytes, long downBytes) {}

  private final ModelShape config;
  private final Device device;
  private final OrtEnv env;
  private final MemoryInfo host;
  private final OrtSession session;
  /** Reads ahead the embedding rows of the tokens a step reads, on the CPU (RowPrefetch). */
  private final RowPrefetch rows;
  private final Allocator allocator;
  private final DeviceKvPool pool;
  private final IoBinding binding;
  private final StepInputs step = new StepInputs();
  private final List<AutoCloseable> owned;
  private Arena logitsArena = Arena.ofShared();
  private MemorySegment logitsBuffer = MemorySegment.NULL;
  private Traffic lastTraffic = new Traffic(0, 0);
  /** The rows {@link #forwardReusingRows} hands out again. */
  private final LogitRows reused = new LogitRows();
  private boolean closed;

  private BoundModelRunner(ModelWeights weights, Device device, int blockSize,
      Function<ModelShape, Integer> blocks, int intraOpThreads, QuantSpec quant) {
    this.config = weights.config();
    this.device = device;
    List<AutoCloseable> opened = new ArrayList<>();
    try {
      host = Resources.track(opened, MemoryInfo.cpu());
      env = Resources.track(opened, OrtEnv.create("radixserve"));
      GraphDtype dtype = device.dtype();
      OnnxGraph decoder = weights.graph().build(blockSize, dtype, quant);
      try (SessionOptions options = options(intraOpThreads)) {
        WeightsFile.Opened file = WeightsFile.open(env, decoder, weights.tensors(), options,
            WeightStore.temporary());
        session = Resources.track(opened, file.session());
        // on CUDA the tables are in the device's memory: nothing is read from the file by row
        rows = Resources.track(opened, device.kind() == Device.Kind.CUDA
            ? closeToNone(file.rows()) : file.rows());
      }
      NativeHeap.trim(); // the weights made for the session and its transient copies are freed
      MemoryInfo poolMemory = Resources.track(opened, device.kind() == Device.Kind.CUDA
          ? MemoryInfo.device("Cuda", device.cuda().deviceId()) : MemoryInfo.cpu());
      allocator = Resources.track(opened, Allocator.of(session, poolMemory));
      pool = Resources.track(opened, DeviceKvPool.create(config, blockSize, blocks.apply(config), dtype,
          allocator, graph -> {
            try (SessionOptions o = options(1)) {
              return OrtSession.create(env, graph, o);
            }
          }));
      binding = Resources.track(opened, IoBinding.create(session));
      for (int i = 0; i < config.nLayer(); i++) {
        binding.bindInput(PagedGraph.keyCache(i), pool.keys(i));
        binding.bindInput(PagedGraph.valueCache(i), pool.values(i));
        binding.bindOutput(PagedGraph.keyCacheOut(i), pool.keys(i)); // updated in place
        binding.bindOutput(PagedGraph.valueCacheOut(i), pool.values(i));
      }
    } catch (RuntimeException e) {
      Resources.closeAll(opened.reversed(), e);
      throw e;
    }
    owned = opened.reversed();
  }

  /** A runner with a pool of exactly {@code numBlocks} blocks. */
  public static BoundModelRunner create(ModelWeights weights, Device device, int blockSize,
      int numBlocks, int intraOpThreads) {
    return create(weights, device, blockSize, numBlocks, intraOpThreads, QuantSpec.none());
  }

  /** As above, the linear layers quantized as {@code quant} says (MatMulNBits). */
  public static BoundModelRunner create(ModelWeights weights, Device device, int blockSize,
      int numBlocks, int intraOpThreads, QuantSpec quant) {
    return new BoundModelRunner(weights, device, blockSize, c -> numBlocks, intraOpThreads,
        quant);
  }

  /** A runner whose pool takes as many blocks as fit in {@code kvBudgetBytes}. */
  public static BoundModelRunner createForBudget(ModelWeights weights, Device device, int blockSize,
      long kvBudgetBytes, int intraOpThreads) {
    return createForBudget(weights, device, blockSize, kvBudgetBytes, intraOpThreads,
        QuantSpec.none());
  }

  /** As above, the linear layers quantized as {@code quant} says (MatMulNBits). */
  public static BoundModelRunner createForBudget(ModelWeights weights, Device device, int blockSize,
      long kvBudgetBytes, int intraOpThreads, QuantSpec quant) {
    return new BoundModelRunner(weights, device, blockSize,
        c -> DeviceKvPool.blocksFor(c, blockSize, device.dtype(), kvBudgetBytes), intraOpThreads,
        quant);
  }

  private SessionOptions options(int intraOpThreads) {
    SessionOptions options = SessionOptions.create();
    try {
      options.intraOpThreads(intraOpThreads).interOpThreads(1).sequentialExecution()
          .optimization(SessionOptions.Optimization.ALL);
      if (device.kind() == Device.Kind.CUDA) {
        // No custom domain here: the PagedAttention node must resolve to ONNX Runtime's own
        // CUDA kernel through the built-in schema.
        CudaProvider.appendTo(options, device.cuda());
      } else {
        options.addCustomOpDomain(PagedAttentionOp.domain());
      }
      return options;
    } catch (RuntimeException e) {
      options.close();
      throw e;
    }
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

  public Device device() {
    return device;
  }

  /** The pool (tests read it back on the CPU). */
  public DeviceKvPool kvPool() {
    return pool;
  }

  /** The pool's block copies to and from host memory (the cache tiers below the pool). */
  @Override
  public Optional<KvBlockIo> blockIo() {
    return Optional.of(pool);
  }

  /** Closes {@code rows}; {@link RowPrefetch#NONE} in its place. */
  private static RowPrefetch closeToNone(RowPrefetch rows) {
    rows.close();
    return RowPrefetch.NONE;
  }

  @Override
  public void prefetchRows(int[] ids, int from, int to) {
    if (!closed) {
      rows.rows(ids, from, to);
    }
  }

  /** The model's binding (tests count what it bound). */
  IoBinding binding() {
    return binding;
  }

  /** What the last {@link #forward} bound from host memory. */
  public Traffic lastTraffic() {
    return lastTraffic;
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
    BatchValidator.check(batch, config, pool.blockSize(), pool.numBlocks());
    for (ForwardBatch.Seq s : batch.seqs()) {
      // a prefill's (or a draft's) rows, read in parallel rather than a fault at a time; a
      // decode token's were asked for when it was sampled (prefetchRows)
      if (s.newTokens().length > 1) {
        rows.rows(s.newTokens(), 0, s.newTokens().length);
      }
    }
    long indexBefore = pool.indexBytes();
    for (ForwardBatch.BlockCopy c : batch.copies()) {
      pool.copyBlock(c.srcBlock(), c.dstBlock(), c.slots());
    }
    step.fill(batch, pool.blockSize(), config.nPositions());
    int rows = batch.logitRows();
    long logitsBytes = (long) rows * config.vocabSize() * Float.BYTES;
    OrtValue[] stepValues = step.values(host);
    List<String> names = PagedGraph.stepInputNames();
    long boundBefore = binding.boundBytes();
    try (OrtValue logits = OrtValue.wrap(host, logitsBuffer(logitsBytes), ElementType.FLOAT,
        rows, config.vocabSize())) {
      for (int i = 0; i < stepValues.length; i++) {
        binding.bindInput(names.get(i), stepValues[i]);
      }
      binding.bindOutput(PagedGraph.LOGITS, logits);
      binding.run();
      binding.synchronizeOutputs();
      long up = binding.boundBytes() - boundBefore - logitsBytes
          + pool.indexBytes() - indexBefore;
      lastTraffic = new Traffic(up, logitsBytes);
      return out.copy(logitsBuffer, rows, config.vocabSize());
    } finally {
      for (OrtValue v : stepValues) {
        v.close();
      }
    }
  }

  private MemorySegment logitsBuffer(long bytes) {
    if (logitsBuffer.byteSize() < bytes) {
      logitsArena.close();
      logitsArena = Arena.ofShared();
      logitsBuffer = logitsArena.allocate(Math.max(bytes, 2 * logitsBuffer.byteSize()), 64);
    }
    return logitsBuffer.asSlice(0, bytes);
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    List<AutoCloseable> all = new ArrayList<>(owned);
    all.add(step);
    all.add(logitsArena::close);
    Resources.closeAll(all, null);
  }
}
