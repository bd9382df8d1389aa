package dev.radixserve.server;

import dev.radixserve.cache.BlockPool;
import dev.radixserve.cache.CacheListener;
import dev.radixserve.cache.PrefixCache;
import dev.radixserve.cache.RadixCache;
import dev.radixserve.cache.EvictionPolicy;
import dev.radixserve.model.BoundModelRunner;
import dev.radixserve.model.Device;
import dev.radixserve.model.KvBlockIo;
import dev.radixserve.model.ModelConfig;
import dev.radixserve.model.ModelShape;
import dev.radixserve.model.ModelWeights;
import dev.radixserve.model.ModelRunner;
import dev.radixserve.model.KvPool;
import dev.radixserve.model.MemoryPlan;
import dev.radixserve.model.NativeHeap;
import dev.radixserve.model.WeightPages;
import dev.radixserve.model.OnnxModelRunner;
import dev.radixserve.server.memory.AvailableMemory;
import dev.radixserve.server.memory.InsufficientMemoryException;
import dev.radixserve.server.memory.KvBudget;
import dev.radixserve.model.RunnerWarmup;
import dev.radixserve.model.attention.PagedAttentionOp;
import dev.radixserve.model.graph.GraphDtype;
import dev.radixserve.model.graph.KvDtype;
import dev.radixserve.model.quant.QuantMode;
import dev.radixserve.model.quant.QuantSpec;
import dev.radixserve.model.Tokenizer;
import dev.radixserve.model.chat.ChatMlTemplate;
import dev.radixserve.model.chat.ChatTemplate;
import dev.radixserve.model.sampling.LogitsSampler;
import dev.radixserve.model.tokenizer.TokenizerLoader;
import dev.radixserve.model.weights.EosTokens;
import dev.radixserve.model.gguf.GgufModelLoader;
import dev.radixserve.model.weights.HfModelLoader;
import dev.radixserve.model.WeightStore;
import dev.radixserve.model.weights.WeightsDigest;
import dev.radixserve.model.weights.LoadedModel;
import dev.radixserve.model.weights.RandomGpt2;
import dev.radixserve.model.weights.Tensor;
import dev.radixserve.server.cacheview.CacheRecorder;
import dev.radixserve.server.cacheview.CacheViewService;
import dev.radixserve.server.api.RequestLimits;
import dev.radixserve.server.api.ReasoningSyntax;
import dev.radixserve.server.api.ToolCallSyntax;
import dev.radixserve.server.config.ServerConfig;
import dev.radixserve.server.engine.BlockTiers;
import dev.radixserve.server.engine.Engine;
import dev.radixserve.server.engine.EngineObserver;
import dev.radixserve.server.engine.EngineSnapshot;
import dev.radixserve.server.http.CacheViewHandler;
import dev.radixserve.server.http.ConnectionLimit;
import dev.radixserve.server.http.DescriptorLimit;
import dev.radixserve.server.http.HttpHandler;
import dev.radixserve.server.kvevents.KvEventPublisher;
import dev.radixserve.server.kvtier.KvTiers;
import dev.radixserve.server.kvtier.TierListener;
import dev.radixserve.server.http.ServerInitializer;
import dev.radixserve.server.metrics.ServerMetrics;
import dev.radixserve.server.spec.Speculation;
import dev.radixserve.server.spec.SpeculativeMode;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Logger;

/**
 * The server: model, KV pool, prefix cache, engine thread and Netty endpoint. The CLI calls
 * {@link #start}; {@link #shutdown} drains and releases everything.
 */
public final class RadixServer {

  /**
   * The CPU in fp32 keeps the plain runner (host pool, no IOBinding: as fast as ever); CUDA, and
   * fp16 on the CPU, take the IOBinding runner with its pool in the device's memory.
   */
  private static ModelRunner createRunner(ModelWeights weights, ServerConfig config,
      QuantSpec quant, long kvBudget, String checkpointKey) {
    Device device = config.device();
    if (device.cpuFp32()) {
      WeightStore store = config.weightsCache() == null ? WeightStore.temporary()
          : WeightStore.cache(config.weightsCache(), checkpointKey);
      return config.numBlocks() != null
          ? OnnxModelRunner.create(weights, config.blockSize(), config.numBlocks(),
              config.threads(), java.util.Map.of(), quant, config.kvCacheDtype(), store)
          : OnnxModelRunner.createForBudget(weights, config.blockSize(), kvBudget,
              config.threads(), quant, config.kvCacheDtype(), store);
    }
    // ServerConfig checked that the device's runner keeps the pool in its graph dtype here
    LOG.info("running on " + device.kind().settingName() + " in " + device.dtype().settingName());
    return config.numBlocks() != null
        ? BoundModelRunner.create(weights, device, config.blockSize(), config.numBlocks(),
            config.threads(), quant)
        : BoundModelRunner.createForBudget(weights, device, config.blockSize(), kvBudget,
            config.threads(), quant);
  }

  /**
   * The CPU runner's planned footprint ({@link MemoryPlan}), logged, and refused with its numbers
   * when the peak while loading would not fit in the memory this process may still take
   * ({@link AvailableMemory}: the machine's, or the container's cgroup limit). The plan covers
   * the fp32 CPU runner; other devices load unchecked.
   *
   * @throws InsufficientMemoryException before any weight is read
   */
  private static void checkMemory(ModelWeights weights, ServerConfig config, QuantSpec quant,
      long kvBudget) {
    if (!plannedDevice(config)) {
      return;
    }
    MemoryPlan plan = config.numBlocks() != null
        ? MemoryPlan.of(weights, config.blockSize(), config.numBlocks(), quant)
        : MemoryPlan.forBudget(weights, config.blockSize(), kvBudget, quant);
    LOG.info("memory plan: " + plan.describe());
    InsufficientMemoryException.refuseIfShort(plan, AvailableMemory.read());
  }

  /** Whether {@link MemoryPlan} covers the device's runner: the CPU in fp32. */
  private static boolean plannedDevice(ServerConfig config) {
    return config.device().cpuFp32();
  }

  /**
   * The KV pool's budget: {@code --kv-cache-memory} as given, or under {@code auto} the model's
   * context within half the free memory ({@link KvBudget#auto}) where the plan covers the device.
   */
  public static KvBudget kvBudget(ModelWeights weights, ServerConfig config, QuantSpec quant) {
    if (config.kvCacheMemoryBytes() != ServerConfig.KV_CACHE_MEMORY_AUTO) {
      return KvBudget.given(config.kvCacheMemoryBytes());
    }
    if (!plannedDevice(config)) {
      return KvBudget.floor("the pool is in the device's memory, which is not read");
    }
    int tokens = maxModelLen(config, weights.config());
    long blocks = (tokens + config.blockSize() - 1) / config.blockSize();
    long contextBytes = blocks
        * KvPool.bytesPerBlock(weights.config(), config.blockSize(), config.kvCacheDtype());
    return KvBudget.auto(tokens, contextBytes,
        MemoryPlan.of(weights, config.blockSize(), 0, quant), AvailableMemory.read());
  }

  /** The longest prompt + completion: --max-model-len within the model's positions. */
  private static int maxModelLen(ServerConfig config, ModelShape mc) {
    return config.maxModelLen() == null ? mc.nPositions()
        : Math.min(config.maxModelLen(), mc.nPositions());
  }

  private static final Logger LOG = Logger.getLogger(RadixServer.class.getName());
  /** Enough steps for the JIT to compile the attention kernel's loops; time-capped for big models. */
  private static final int WARMUP_STEPS = 40;
  private static final java.time.Duration WARMUP_BUDGET = java.time.Duration.ofSeconds(3);
  private static final long START_STACK_BYTES = 16L << 20;

  private final ModelRunner runner;
  private final Engine engine;
  private final CacheViewService cacheView;
  private final ServerMetrics metrics;
  private final RadixCache radixCache;
  /** The configured quantization, resolved for the loaded model. */
  private final QuantSpec quant;
  /** {@link WeightsDigest} of the checkpoint's files. */
  private final String weightsDigest;
  private final KvEventPublisher kvEvents;
  private final KvTiers tiers;
  private final HttpHandler handler;
  private final EventLoopGroup group;
  private final Channel channel;
  private final CountDownLatch terminated = new CountDownLatch(1);
  private final AtomicBoolean stopping = new AtomicBoolean();
  private volatile boolean ready;

  private RadixServer(ServerConfig requested) throws InterruptedException {
    Tokenizer tokenizer;
    EosTokens eos;
    ModelWeights weights;
    ChatTemplate chatTemplate;
    List<java.nio.file.Path> weightFiles = List.of();
    if (requested.model() == null) {
      weights = RandomGpt2.create(ModelConfig.embeddedDefault(), 0);
      tokenizer = TokenizerLoader.standard();
      eos = EosTokens.of(tokenizer);
      chatTemplate = new ChatMlTemplate();
    } else {
      LoadedModel loaded = GgufModelLoader.isGguf(requested.model())
          ? GgufModelLoader.load(requested.model()) : HfModelLoader.load(requested.model());
      weights = loaded.weights();
      tokenizer = loaded.tokenizer();
      eos = loaded.eos();
      chatTemplate = loaded.chatTemplate();
      weightFiles = loaded.weightFiles();
    }
    ModelShape mc = weights.config();
    // which weights these are (not only their shape and name): in the disk tier's fingerprint and
    // /v1/models, so new weights under an old name never load the old weights' KV blocks
    long digestStart = System.nanoTime();
    weightsDigest = requested.model() == null ? "embedded-seed-0" : WeightsDigest.of(weightFiles);
    LOG.info(String.format("weights digest %s (%d ms)", weightsDigest,
        (System.nanoTime() - digestStart) / 1_000_000));
    // a GPTQ/AWQ checkpoint brings its own blocks; the LM head's auto block size depends on the
    // model's width: resolved once, here
    quant = QuantSpec.forModel(requested.quantization(), weights.checkpointQuantization(),
        requested.quantizationAuto() ? weights.requantizeAs() : QuantMode.NONE,
        weights.offsetWeights(), weights.q8Tables(),
        QuantSpec.accuracyLevelFor(requested.device().kind() == Device.Kind.CUDA),
        requested.quantizationHead())
        .resolvedFor(mc.hiddenSize());
    // --kv-cache-dtype auto follows the weights as served (bfloat16 beside quantized weights)
    ServerConfig config = requested.withKvCacheDtypeFor(quant);
    if (!PagedAttentionOp.vectorized()) {
      LOG.warning("the JVM was started without --add-modules jdk.incubator.vector: the CPU"
          + " attention kernel runs without the Vector API (about 4x slower attention)");
    }
    // ONNX Runtime keeps its own copy of every initializer (quantized, converted or as is), so
    // the checkpoint's memory (a mapping, or the embedded model's arena) goes as soon as the
    // session holds the weights: a quantized model then costs its quantized size, not both
    long params;
    try (weights) {
      // a budget only where --num-blocks does not size the pool itself
      long kvBudget = 0;
      if (config.numBlocks() == null) {
        KvBudget budget = kvBudget(weights, config, quant);
        LOG.info("KV pool budget " + budget.reason());
        kvBudget = budget.bytes();
      }
      checkMemory(weights, config, quant, kvBudget);
      runner = createRunner(weights, config, quant, kvBudget,
          WeightsDigest.cacheKey(weightsDigest, weightFiles));
      params = weights.tensors().values().stream()
          .mapToLong(t -> Tensor.elementCount(t.shape())).sum();
    }
    if (config.warmup()) {
      // before any block is handed out: the warm-up scribbles on the first few
      RunnerWarmup.Result warm = RunnerWarmup.run(runner, WARMUP_BUDGET, WARMUP_STEPS);
      LOG.info(String.format("warm-up: %d forward steps in %d ms", warm.steps(),
          warm.took().toMillis()));
    }
    // The load's and the warm-up's garbage (each worker's last quantized tensor, the graph's
    // protobuf, the warm-up's logits) is dead now; one full collection lets the heap give back
    // what it grew to instead of holding it, unused, for the server's life. After the warm-up,
    // not before: its young collections grew the heap to ~210 MiB again (1B, int4).
    System.gc();
    NativeHeap.trim(); // and the checkpoint's (an embedded model's arena) freed C heap
    // the weights' pages only the load read (MatMulNBits' original scales, the warm-up's rows)
    long pagedOut = WeightPages.pageOut();
    if (pagedOut > 0) {
      LOG.info("weights file mappings paged out after the warm-up: " + MemoryPlan.mib(pagedOut));
    }
    BlockPool pool = new BlockPool(runner.numBlocks());
    radixCache = config.prefixCaching()
        ? new RadixCache(pool, config.blockSize(), EvictionPolicy.lru())
        : null;
    CacheRecorder cacheRecorder = new CacheRecorder();
    if (radixCache != null) {
      radixCache.addListener(cacheRecorder);
    }
    Optional<PrefixCache> cache = Optional.ofNullable(radixCache);
    tiers = startTiers(config, mc);
    if (tiers != null) {
      radixCache.addListener(tiers);
      cacheRecorder.showTiers(tiers); // the view marks their blocks as offloaded nodes
    }
    kvEvents = startKvEvents(config);
    int maxModelLen = maxModelLen(config, mc);
    Speculation speculation =
        config.speculation().on(config.device().kind() == Device.Kind.CUDA);
    metrics = new ServerMetrics();
    engine = new Engine(runner, pool, cache,
        Optional.<BlockTiers>ofNullable(tiers), tokenizer, eos.ids(),
        p -> new LogitsSampler(p, mc.vocabSize()),
        new Engine.Settings(config.schedulePolicy(), config.maxNumSeqs(),
            config.maxNumBatchedTokens(), config.prefillChunkSize(), config.maxQueuedRequests(),
            new Engine.FairShareSettings(config.fairShare(), config.effectiveMaxSeqsPerRequest()),
            speculation),
        EngineObserver.both(metrics, cacheRecorder));
    metrics.bindEngine(engine, config.blockSize(), config.servedModelName());
    if (kvEvents != null) {
      metrics.bindKvEvents(kvEvents);
    }
    if (tiers != null) {
      metrics.bindTiers(tiers);
      if (kvEvents != null) {
        KvEventPublisher events = kvEvents;
        tiers.setListener(new TierListener() {
          @Override
          public void stored(String medium, long hash, Long parentHash, int[] tokens,
              String salt) {
            events.tierStored(medium, hash, parentHash, tokens, salt);
          }

          @Override
          public void removed(String medium, long hash) {
            events.tierRemoved(medium, hash);
          }
        });
      }
    }
    engine.start();
    cacheView = new CacheViewService(engine, cache, tokenizer::decode, config.blockSize(),
        cacheRecorder, cacheModelKey(config, quant), config.kvCacheDtype().settingName());
    cacheView.start();
    RequestLimits limits = new RequestLimits(maxModelLen, config.maxNumSeqs(),
        config.maxChoicesPerRequest(), config.maxQueuedRequests(), RequestLimits.OPENAI_MAX_STOPS,
        config.maxStopLength(), config.blockSize(), runner.numBlocks());
    handler = new HttpHandler(new HttpHandler.Context(engine, tokenizer, chatTemplate, metrics,
        config.servedModelName(), limits, config.apiKey(), () -> ready,
        config.model() == null ? config.servedModelName() : config.model().toString(),
        weightsDigest, config.clientIdHeader(),
        ToolCallSyntax.of(config.toolCallParser(), chatTemplate),
        ReasoningSyntax.of(config.reasoningParser(), chatTemplate)));
    group = new MultiThreadIoEventLoopGroup(NioIoHandler.newFactory());
    ServerInitializer initializer = new ServerInitializer(handler,
        new CacheViewHandler(cacheView, config.apiKey(), metrics), new ServerInitializer.Limits(
        config.maxRequestBodyBytes(), DescriptorLimit.capConnections(config.maxConnections()),
        config.idleTimeout(), config.headerTimeout(), config.bodyTimeout()));
    ConnectionLimit connections = initializer.connections();
    metrics.bindConnections(connections::openConnections, connections.max(),
        connections::refusedAtAccept, connections::idleEvicted);
    channel = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
        .childHandler(initializer)
        .bind(config.host(), config.port()).sync().channel();
    LOG.info(() -> String.format("model %s (%s): %d layers, %d kv heads of %d, %,d parameters;"
        + " weights %s; EOS %s (%s); KV pool %d blocks of %d tokens in %s (%,d bytes); prefix"
        + " caching %s; speculative decoding %s; listening on http://%s:%d",
        config.servedModelName(),
        config.model() == null ? "embedded random GPT-2" : config.model(), mc.nLayer(),
        mc.kvHeads(), mc.headDim(), params, quant.quantized()
            ? "quantized " + quant.key() : "unquantized", eos.ids(), eos.source(),
        runner.numBlocks(), config.blockSize(), config.kvCacheDtype().settingName(),
        dev.radixserve.model.KvPool.bytesPerBlock(mc, config.blockSize(),
            config.kvCacheDtype()) * runner.numBlocks(),
        config.prefixCaching() ? "on" : "off",
        speculativeLine(config.speculation(), speculation), config.host(), port()));
    ready = true;
  }

  /** What {@code --speculative} runs as ({@code runs}), saying so where auto chose it. */
  private static String speculativeLine(Speculation set, Speculation runs) {
    String mode = runs.mode().name().toLowerCase(java.util.Locale.ROOT);
    return set.mode() == SpeculativeMode.AUTO ? mode + " (auto)" : mode;
  }

  /** The cache tiers below the pool when one is configured (prefix caching on); else null. */
  private KvTiers startTiers(ServerConfig config, ModelShape mc) {
    if (config.kvOffloadMemoryBytes() == 0 && config.kvOffloadDir() == null) {
      return null;
    }
    if (radixCache == null) {
      LOG.warning("kv-offload-memory/kv-offload-dir set but prefix caching is off: no tiers");
      return null;
    }
    // both runners' pools export blocks (host pool: memcpy; device pool: read/write graphs)
    KvBlockIo io = runner.blockIo().orElseThrow(() -> new IllegalStateException(
        "kv-offload-memory/kv-offload-dir: this model runner's KV pool cannot export blocks"));
    // what else a block's bytes depend on: the shape and the pool's dtype (any family: a cached
    // row is kv heads x head dim wide; the quantization is in the model key, as in the KV events)
    String shape = String.format(
        "layers=%d,kvheads=%d,headdim=%d,positions=%d,vocab=%d,dtype=%s,kv=%s,weights=%s",
        mc.nLayer(), mc.kvHeads(), mc.headDim(), mc.nPositions(), mc.vocabSize(),
        config.device().dtype(), config.kvCacheDtype().settingName(), weightsDigest);
    KvTiers t = KvTiers.create(config.kvOffloadMemoryBytes(), config.kvOffloadDir(),
        config.kvOffloadDiskBytes(), config.kvOffloadDiskWrite(), io, cacheModelKey(config, quant),
        shape, config.blockSize());
    LOG.info(() -> "KV tiers below the pool: " + t.stats());
    return t;
  }

  /** The KV event publisher when {@code kv-events} is on (and prefix caching with it); else null. */
  private KvEventPublisher startKvEvents(ServerConfig config) {
    if (!config.kvEvents().enabled()) {
      return null;
    }
    if (radixCache == null) {
      LOG.warning("kv-events is on but prefix caching is off: no cache, no events; not publishing");
      return null;
    }
    KvEventPublisher publisher =
        new KvEventPublisher(config.kvEvents(), radixCache, cacheModelKey(config, quant));
    LOG.info(() -> "KV events: publishing on " + publisher.endpoint() + (publisher.replayEndpoint()
        == null ? "" : ", replay on " + publisher.replayEndpoint()) + ", topic '"
        + (config.kvEvents().topic() == null ? "" : config.kvEvents().topic()) + "'");
    return publisher;
  }

  /**
   * The model as the block hashes name it: the served name, then the dtype when it is not fp32,
   * the KV cache dtype when it is not the graph's ({@code gpt2@kv-int8}), and the quantization
   * when there is one ({@code gpt2@int4/bauto128/asym/acc4/head-int8-b256}, {@code gpt2@float16}),
   * since an int4, fp16 or int8-KV model's KV blocks are not the fp32 model's. For fp32
   * unquantized with an fp32 pool it is the plain name, so llm-d's own hash of a prefix still
   * equals ours.
   * A GGUF file adds its identity ({@code #size@mtime;headerhash}, {@link
   * GgufModelLoader#identity}).
   *
   * @param quant the config's quantization {@link QuantSpec#resolvedFor resolved} for the model
   */
  static String cacheModelKey(ServerConfig config, QuantSpec quant) {
    String key = config.servedModelName();
    if (GgufModelLoader.isGguf(config.model())) {
      // another file under the same name must never reuse these blocks
      key += "#" + GgufModelLoader.identity(config.model());
    }
    if (config.device().dtype() != GraphDtype.FLOAT32) {
      key += "@" + config.device().dtype().settingName();
    }
    if (config.kvCacheDtype() != KvDtype.of(config.device().dtype())) {
      key += "@kv-" + config.kvCacheDtype().settingName();
    }
    return quant.quantized() ? key + "@" + quant.key() : key;
  }

  /** Loads the model, starts the engine and the HTTP endpoint. */
  public static RadixServer start(ServerConfig config) {
    // ONNX Runtime's initialisation runs deep native frames: on the launcher's main thread
    // (1 MiB stack) `java -cp ... serve` died of a segfault in OrtEnv creation, so the start
    // runs on a thread whose stack does not depend on how deep the caller already is
    FutureTask<RadixServer> start = new FutureTask<>(() -> new RadixServer(config));
    Thread.ofPlatform().name("radixserve-start").stackSize(START_STACK_BYTES).start(start);
    try {
      return start.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while starting", e);
    } catch (ExecutionException e) {
      switch (e.getCause()) {
        case RuntimeException r -> throw r;
        case Error err -> throw err;
        default -> throw new IllegalStateException("the server did not start", e.getCause());
      }
    }
  }

  public int port() {
    return ((InetSocketAddress) channel.localAddress()).getPort();
  }

  /** The Prometheus text of /metrics, without a connection (tests, diagnostics). */
  public String scrapeMetrics() {
    return metrics.scrape();
  }

  public boolean isReady() {
    return ready;
  }

  /** Test hook: the engine's memory consistency right now. */
  public EngineSnapshot inspect() {
    return engine.inspect().join();
  }

  /** The KV event publisher, when {@code kv-events} is on. */
  public Optional<KvEventPublisher> kvEvents() {
    return Optional.ofNullable(kvEvents);
  }

  /**
   * Test hook: tells {@code listener} about every node of the radix cache now (see {@link
   * RadixCache#replay}), on the engine thread; nothing with prefix caching off.
   */
  public void replayCache(CacheListener listener) {
    engine.onEngineThread(() -> {
      if (radixCache != null) {
        radixCache.replay(listener);
      }
      return null;
    }).join();
  }

  /**
   * Stops accepting, lets running requests finish within {@code drainTimeout}, aborts the rest,
   * releases everything.
   */
  public void shutdown(Duration drainTimeout) {
    if (!stopping.compareAndSet(false, true)) {
      try {
        terminated.await(); // a second caller (signal and hook) returns once the first is done
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return;
    }
    ready = false;
    try {
      long deadline = System.nanoTime() + drainTimeout.toNanos();
      handler.awaitAdmitted(deadline);
      engine.shutdown(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
      if (tiers != null) {
        tiers.persist(radixCache); // the engine thread has stopped: the cache is ours now
      }
      channel.close().sync();
      // the engine handed its last events (errors, [DONE]) to the event loops before it stopped;
      // a no-op behind them on every loop lets those writes go out before the loops close their
      // channels (a loop that shuts down closes its channels before running queued tasks)
      for (io.netty.util.concurrent.EventExecutor loop : group) {
        loop.submit(() -> { }).await(2, TimeUnit.SECONDS);
      }
      group.shutdownGracefully(0, 2, TimeUnit.SECONDS).sync();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      handler.close();
      cacheView.close();
      if (kvEvents != null) {
        kvEvents.close();
      }
      if (tiers != null) {
        tiers.close();
      }
      runner.close();
      metrics.close();
      terminated.countDown();
    }
  }

  public void awaitTermination() throws InterruptedException {
    terminated.await();
  }
}
