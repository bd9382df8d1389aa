package dev.radixserve.server.config;

import dev.radixserve.model.Device;
import dev.radixserve.model.graph.GraphDtype;
import dev.radixserve.model.graph.KvDtype;
import dev.radixserve.model.ort.CudaProvider;
import dev.radixserve.model.quant.QuantMode;
import dev.radixserve.model.quant.QuantSpec;
import dev.radixserve.server.kvtier.DiskWritePolicy;
import dev.radixserve.server.spec.Speculation;
import dev.radixserve.server.spec.SpeculativeMode;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The server's whole configuration, validated. Built by the CLI from flags, environment
 * variables ({@code RADIXSERVE_*}), a config file and defaults (that precedence); tests build
 * it directly with {@link #defaults()} and the {@code with*} copies they need.
 *
 * @param host address to bind
 * @param port HTTP port (0 picks a free one, for tests)
 * @param model a Hugging Face model directory or a GGUF file; null serves the embedded random-weight model
 * @param servedModelName the model id clients send and {@code /v1/models} lists
 * @param blockSize tokens per KV block
 * @param kvCacheMemoryBytes KV pool budget in bytes, or {@link #KV_CACHE_MEMORY_AUTO} (the
 *     default: sized from the model's context and the free memory, {@code KvBudget}); used when
 *     numBlocks is null
 * @param numBlocks KV blocks; overrides kvCacheMemoryBytes when set
 * @param maxNumSeqs most sequences in one batch
 * @param maxNumBatchedTokens token budget of one forward step (prefill chunks + decodes)
 * @param maxModelLen longest prompt + completion; null means the model's n_positions
 * @param schedulePolicy admission order
 * @param prefixCaching reuse cached prefixes (off only for comparisons)
 * @param apiKey required bearer token; null disables auth
 * @param maxQueuedRequests waiting requests beyond which new ones get 429
 * @param threads ONNX Runtime intra-op threads; 0 lets it choose
 * @param maxRequestBodyBytes larger bodies get 413
 * @param shutdownTimeout how long SIGTERM waits for running requests
 * @param kvEvents KV cache events for cache-aware routers (off by default)
 * @param maxChoicesPerRequest most prompts × n in one request; more get 400
 * @param maxStopLength most characters in one stop string; longer get 400
 * @param prefillChunkSize most prompt tokens one sequence computes in one step
 * @param maxConnections open connections beyond which new ones are refused with 503
 * @param idleTimeout a connection with no request in progress is closed after this
 * @param headerTimeout a request's head must arrive within this (else 408)
 * @param bodyTimeout a request's body must arrive within this after its head (else 408)
 * @param warmup run a few forward steps before listening, so the first requests do not pay for
 *     compiling the attention kernel
 * @param device where the model runs (CPU or CUDA), its dtype and CUDA provider settings
 * @param fairShare share sequence slots fairly between clients (off only for comparisons)
 * @param maxSeqsPerRequest sequences one request runs at most while another request of its
 *     client waits; null: a quarter of maxNumSeqs (at least 1)
 * @param clientIdHeader request header naming the client for fair shares (a gateway's user
 *     header); null, or a request without it: the connection is the client
 * @param kvOffloadMemoryBytes budget of the host-memory tier below the KV pool; 0: none
 * @param kvOffloadDir directory of the disk tier below the KV pool (kept across restarts); null:
 *     none
 * @param kvOffloadDiskBytes the disk tier's budget
 * @param kvOffloadDiskWrite which evicted blocks the disk tier takes (all, or only reused ones)
 * @param quantization how the linear layers' weights are stored ({@code --quantization} and its
 *     block size, zero points and LM-head keys; the accuracy level is the device's); none when
 *     {@code quantizationAuto}
 * @param quantizationAuto {@code --quantization} not given (or {@code auto}): the model's own
 *     choice, none for a float checkpoint and the nearest MatMulNBits mode for a GGUF file in
 *     blocks no mode takes bit for bit ({@code ModelWeights.requantizeAs}); an explicit {@code
 *     none} serves such a file's dequantized weights at fp32
 * @param toolCallParser the tool-call syntax of chat replies ({@code auto}: the template's family)
 * @param reasoningParser how chat replies split into reasoning and content ({@code auto}: the
 *     template's family)
 * @param weightsCache directory where the weights as ONNX Runtime maps them (quantized,
 *     converted) are kept across restarts, one file per checkpoint and quantization, so a restart
 *     skips quantizing; null: a temporary file, deleted once the model is loaded
 * @param kvCacheDtype what the KV pool stores in ({@code --kv-cache-dtype}); null: auto, the
 *     graph's dtype ({@link KvDtype#of}) until the load knows whether the weights are served
 *     quantized ({@link #withKvCacheDtypeFor}); checked against the device ({@link
 *     Device#requireKvDtype})
 * @param kvCacheDtypeAuto {@code --kv-cache-dtype} not given (or {@code auto})
 * @param speculation speculative decoding ({@code --speculative}, {@code
 *     --speculative-max-tokens})
 */
public record ServerConfig(
    String host,
    int port,
    Path model,
    String servedModelName,
    int blockSize,
    long kvCacheMemoryBytes,
    Integer numBlocks,
    int maxNumSeqs,
    int maxNumBatchedTokens,
    Integer maxModelLen,
    SchedulePolicy schedulePolicy,
    boolean prefixCaching,
    String apiKey,
    int maxQueuedRequests,
    int threads,
    long maxRequestBodyBytes,
    Duration shutdownTimeout,
    KvEventsConfig kvEvents,
    int maxChoicesPerRequest,
    int maxStopLength,
    int prefillChunkSize,
    int maxConnections,
    Duration idleTimeout,
    Duration headerTimeout,
    Duration bodyTimeout,
    boolean warmup,
    Device device,
    boolean fairShare,
    Integer maxSeqsPerRequest,
    String clientIdHeader,
    long kvOffloadMemoryBytes,
    Path kvOffloadDir,
    long kvOffloadDiskBytes,
    DiskWritePolicy kvOffloadDiskWrite,
    QuantSpec quantization,
    boolean quantizationAuto,
    QuantSpec.HeadSetting quantizationHead,
    ToolCallParserSetting toolCallParser,
    ReasoningParserSetting reasoningParser,
    KvDtype kvCacheDtype,
    boolean kvCacheDtypeAuto,
    Path weightsCache,
    Speculation speculation) {

  public static final String EMBEDDED_MODEL_NAME = "radixserve-embedded-gpt2";

  /** {@code --kv-cache-memory auto}: the budget is chosen at load ({@code KvBudget}). */
  public static final long KV_CACHE_MEMORY_AUTO = -1;

  public ServerConfig {
    require(port >= 0 && port <= 65535, "port", port, "0..65535");
    require(blockSize >= 1 && blockSize <= 1024, "block-size", blockSize, "1..1024");
    require(kvCacheMemoryBytes > 0 || kvCacheMemoryBytes == KV_CACHE_MEMORY_AUTO,
        "kv-cache-memory", kvCacheMemoryBytes, "> 0 bytes, or auto");
    require(numBlocks == null || numBlocks >= 1, "num-blocks", numBlocks, ">= 1");
    require(maxNumSeqs >= 1, "max-num-seqs", maxNumSeqs, ">= 1");
    require(maxNumBatchedTokens >= 1, "max-num-batched-tokens", maxNumBatchedTokens, ">= 1");
    require(maxModelLen == null || maxModelLen >= 1, "max-model-len", maxModelLen, ">= 1");
    require(maxQueuedRequests >= 1, "max-queued-requests", maxQueuedRequests, ">= 1");
    require(threads >= 0, "threads", threads, ">= 0");
    require(maxRequestBodyBytes >= 1024, "max-request-body", maxRequestBodyBytes, ">= 1024 bytes");
    require(!shutdownTimeout.isNegative(), "shutdown-timeout", shutdownTimeout, ">= 0");
    if (kvEvents == null) {
      kvEvents = KvEventsConfig.disabled();
    }
    require(maxChoicesPerRequest >= 1, "max-choices-per-request", maxChoicesPerRequest, ">= 1");
    require(maxStopLength >= 1, "max-stop-length", maxStopLength, ">= 1");
    require(prefillChunkSize >= 1, "prefill-chunk-size", prefillChunkSize, ">= 1");
    require(maxConnections >= 1, "max-connections", maxConnections, ">= 1");
    require(idleTimeout.toMillis() >= 1, "idle-timeout", idleTimeout, ">= 1ms");
    require(headerTimeout.toMillis() >= 1, "header-timeout", headerTimeout, ">= 1ms");
    require(bodyTimeout.toMillis() >= 1, "body-timeout", bodyTimeout, ">= 1ms");
    if (device == null) {
      device = Device.cpu();
    }
    require(maxSeqsPerRequest == null || maxSeqsPerRequest >= 1, "max-seqs-per-request",
        maxSeqsPerRequest, ">= 1");
    require(clientIdHeader == null || clientIdHeader.matches("[A-Za-z0-9!#$%&'*+.^_`|~-]+"),
        "client-id-header", clientIdHeader, "an HTTP header name");
    require(kvOffloadMemoryBytes >= 0, "kv-offload-memory", kvOffloadMemoryBytes, ">= 0 bytes");
    require(kvOffloadDiskBytes > 0, "kv-offload-disk-size", kvOffloadDiskBytes, "> 0 bytes");
    if (kvOffloadDiskWrite == null) {
      kvOffloadDiskWrite = DiskWritePolicy.REUSED;
    }
    if (quantization == null) {
      quantization = QuantSpec.none();
    }
    if (quantizationHead == null) {
      quantizationHead = QuantSpec.HeadSetting.AUTO;
    }
    kvCacheDtype = device.requireKvDtype(
        kvCacheDtype == null ? KvDtype.of(device.dtype()) : kvCacheDtype);
    if (speculation == null) {
      speculation = Speculation.off();
    }
    if (servedModelName == null || servedModelName.isBlank()) {
      servedModelName = model == null ? EMBEDDED_MODEL_NAME : model.getFileName().toString();
    }
  }

  /** The per-request cap in effect: {@code maxSeqsPerRequest}, else a quarter of the slots. */
  public int effectiveMaxSeqsPerRequest() {
    return maxSeqsPerRequest != null ? maxSeqsPerRequest : Math.max(1, maxNumSeqs / 4);
  }

  private static void require(boolean ok, String key, Object value, String allowed) {
    if (!ok) {
      throw new IllegalArgumentException(
          "invalid value for " + key + ": " + value + " (allowed: " + allowed + ")");
    }
  }

  public static ServerConfig defaults() {
    return builder().build();
  }

  /**
   * This configuration with {@code --kv-cache-dtype auto} (the default) resolved for the weights
   * as served ({@link Device#autoKvDtype}: bfloat16 on the CPU beside quantized weights); a given
   * {@code --kv-cache-dtype} is kept as it is.
   */
  public ServerConfig withKvCacheDtypeFor(QuantSpec served) {
    KvDtype auto = device.autoKvDtype(served.quantized());
    if (!kvCacheDtypeAuto || auto == kvCacheDtype) {
      return this;
    }
    Builder b = toBuilder();
    b.kvCacheDtype = auto;
    return b.build();
  }

  public static Builder builder() {
    return new Builder();
  }

  public Builder toBuilder() {
    Builder b = new Builder();
    b.host = host;
    b.port = port;
    b.model = model;
    b.servedModelName = servedModelName;
    b.blockSize = blockSize;
    b.kvCacheMemoryBytes = kvCacheMemoryBytes;
    b.numBlocks = numBlocks;
    b.maxNumSeqs = maxNumSeqs;
    b.maxNumBatchedTokens = maxNumBatchedTokens;
    b.maxModelLen = maxModelLen;
    b.schedulePolicy = schedulePolicy;
    b.prefixCaching = prefixCaching;
    b.apiKey = apiKey;
    b.maxQueuedRequests = maxQueuedRequests;
    b.threads = threads;
    b.maxRequestBodyBytes = maxRequestBodyBytes;
    b.shutdownTimeout = shutdownTimeout;
    b.kvEvents = kvEvents.enabled();
    b.kvEventsEndpoint = kvEvents.endpoint();
    b.kvEventsReplayEndpoint = kvEvents.replayEndpoint();
    b.kvEventsTopic = kvEvents.topic();
    b.kvEventsQueueSize = kvEvents.queueSize();
    b.kvEventsEncoding = kvEvents.encoding();
    b.maxChoicesPerRequest = maxChoicesPerRequest;
    b.maxStopLength = maxStopLength;
    b.prefillChunkSize = prefillChunkSize;
    b.maxConnections = maxConnections;
    b.idleTimeout = idleTimeout;
    b.headerTimeout = headerTimeout;
    b.bodyTimeout = bodyTimeout;
    b.warmup = warmup;
    b.device = device.kind();
    b.dtype = device.dtype();
    b.cudaDeviceId = device.cuda().deviceId();
    b.cudaTf32 = device.cuda().tf32();
    b.fairShare = fairShare;
    b.maxSeqsPerRequest = maxSeqsPerRequest;
    b.clientIdHeader = clientIdHeader;
    b.kvOffloadMemoryBytes = kvOffloadMemoryBytes;
    b.kvOffloadDir = kvOffloadDir;
    b.kvOffloadDiskBytes = kvOffloadDiskBytes;
    b.kvOffloadDiskWrite = kvOffloadDiskWrite;
    b.quantization = quantizationAuto ? null : quantization.mode();
    b.quantizationBlockSize =
        quantization.hasDefaultBlockSize() ? null : quantization.blockSize();
    b.quantizationZeroPoints =
        quantization.hasDefaultZeroPoints() ? null : quantization.zeroPoints();
    b.quantizationLmHead = quantizationHead.lmHead();
    b.quantizationHeadBlockSize = quantizationHead.blockSize();
    b.toolCallParser = toolCallParser;
    b.reasoningParser = reasoningParser;
    b.kvCacheDtype = kvCacheDtypeAuto ? null : kvCacheDtype;
    b.weightsCache = weightsCache;
    b.speculative = speculation.mode();
    b.speculativeMaxTokens = speculation.maxTokens();
    b.speculativePriced = speculation.priced();
    return b;
  }

  /** Mutable builder holding the built-in defaults; {@link #build()} validates. */
  public static final class Builder {
    public String host = "0.0.0.0";
    public int port = 8000;
    public Path model;
    public String servedModelName;
    public int blockSize = 16;
    public long kvCacheMemoryBytes = KV_CACHE_MEMORY_AUTO;
    public Integer numBlocks;
    public int maxNumSeqs = 64;
    public int maxNumBatchedTokens = 2048;
    public Integer maxModelLen;
    public SchedulePolicy schedulePolicy = SchedulePolicy.LPM;
    public boolean prefixCaching = true;
    public String apiKey;
    public int maxQueuedRequests = 1024;
    public int threads;
    public long maxRequestBodyBytes = 8L << 20;
    public Duration shutdownTimeout = Duration.ofSeconds(30);
    public boolean kvEvents;
    public String kvEventsEndpoint = KvEventsConfig.DEFAULT_ENDPOINT;
    public String kvEventsReplayEndpoint;
    public String kvEventsTopic;
    public int kvEventsQueueSize = KvEventsConfig.DEFAULT_QUEUE_SIZE;
    public KvEventEncoding kvEventsEncoding = KvEventEncoding.ARRAY;
    public int maxChoicesPerRequest = 256;
    public int maxStopLength = 256;
    public int prefillChunkSize = 512;
    public int maxConnections = 2048;
    public Duration idleTimeout = Duration.ofSeconds(75);
    public Duration headerTimeout = Duration.ofSeconds(20);
    public Duration bodyTimeout = Duration.ofSeconds(60);
    public boolean warmup = true;
    /** null: auto (the model's own choice; {@link ServerConfig#quantizationAuto}). */
    public QuantMode quantization;
    /** null: the mode's default ({@link QuantSpec#defaultBlockSize}: auto). */
    public Integer quantizationBlockSize;
    /** null: the mode's default ({@link QuantSpec#defaultZeroPoints}: under int4 only). */
    public Boolean quantizationZeroPoints;
    /**
     * null: the mode's default ({@link QuantSpec#defaultHeadMode}: int8); true: the head in the
     * layers' own mode; false: as the checkpoint has it.
     */
    public Boolean quantizationLmHead;
    /**
     * null: auto ({@link QuantSpec#headBlockFor}: an int8 head in blocks of 256 beside int4
     * layers, of 64 beside int8 ones, where they divide).
     */
    public Integer quantizationHeadBlockSize;
    public ToolCallParserSetting toolCallParser = ToolCallParserSetting.AUTO;
    public ReasoningParserSetting reasoningParser = ReasoningParserSetting.AUTO;
    /** null: auto (the graph's dtype: float32 on the CPU). */
    public KvDtype kvCacheDtype;
    public Path weightsCache;
    public SpeculativeMode speculative = SpeculativeMode.AUTO;
    public int speculativeMaxTokens = 8;
    /**
     * No flag: false (tests) leaves draft lengths to the acceptance alone, not to the step times
     * this machine measures ({@link Speculation#priced}).
     */
    public boolean speculativePriced = true;

    public Device.Kind device = Device.Kind.CPU;
    /** null: float32 on the CPU, float16 on CUDA. */
    public GraphDtype dtype;
    public int cudaDeviceId;
    public boolean cudaTf32;
    public boolean fairShare = true;
    public Integer maxSeqsPerRequest;
    public String clientIdHeader;
    public long kvOffloadMemoryBytes;
    public Path kvOffloadDir;
    public long kvOffloadDiskBytes = 16L << 30;
    public DiskWritePolicy kvOffloadDiskWrite = DiskWritePolicy.REUSED;

    public ServerConfig build() {
      GraphDtype resolved = dtype != null ? dtype
          : device == Device.Kind.CUDA ? GraphDtype.FLOAT16 : GraphDtype.FLOAT32;
      if (cudaDeviceId < 0) {
        throw new IllegalArgumentException("invalid value for cuda-device-id: " + cudaDeviceId
            + " (allowed: >= 0)");
      }
      if (quantizationBlockSize != null) {
        require(QuantSpec.validBlockSize(quantizationBlockSize), "quantization-block-size",
            quantizationBlockSize, "auto, 16, 32, 64, 128 or 256");
      }
      if (quantizationHeadBlockSize != null) {
        require(QuantSpec.validBlockSize(quantizationHeadBlockSize),
            "quantization-head-block-size", quantizationHeadBlockSize,
            "auto, 16, 32, 64, 128 or 256");
      }
      return new ServerConfig(host, port, model, servedModelName, blockSize, kvCacheMemoryBytes,
          numBlocks, maxNumSeqs, maxNumBatchedTokens, maxModelLen, schedulePolicy, prefixCaching,
          apiKey, maxQueuedRequests, threads, maxRequestBodyBytes, shutdownTimeout,
          new KvEventsConfig(kvEvents, kvEventsEndpoint, kvEventsReplayEndpoint, kvEventsTopic,
              kvEventsQueueSize, kvEventsEncoding),
          maxChoicesPerRequest, maxStopLength, prefillChunkSize, maxConnections, idleTimeout,
          headerTimeout, bodyTimeout, warmup,
          new Device(device, resolved, new CudaProvider.Settings(cudaDeviceId, cudaTf32)),
          fairShare, maxSeqsPerRequest, clientIdHeader,
          kvOffloadMemoryBytes, kvOffloadDir, kvOffloadDiskBytes, kvOffloadDiskWrite,
          quantization(), quantization == null, new QuantSpec.HeadSetting(quantizationLmHead,
              quantizationHeadBlockSize), toolCallParser, reasoningParser,
              kvCacheDtype, kvCacheDtype == null, weightsCache,
              new Speculation(speculative, speculativeMaxTokens, Speculation.DEFAULT_MAX_BATCH,
                  speculativePriced));
    }

    /**
     * The quantization as the device runs it: on the CPU, {@code accuracy_level} 4 (int8 dot
     * products, measured faster; ONNX Runtime has no fp32-compute kernel for 8-bit weights on
     * x86); CUDA's MatMulNBits computes in the activations' type and takes no level (0).
     */
    private QuantSpec quantization() {
      if (quantization == null || quantization == QuantMode.NONE) {
        return QuantSpec.none();
      }
      // QuantSpec.of holds the defaults; null (auto) keeps them
      QuantSpec spec = QuantSpec.of(quantization)
          .withAccuracyLevel(QuantSpec.accuracyLevelFor(device == Device.Kind.CUDA));
      if (quantizationBlockSize != null) {
        spec = spec.withBlockSize(quantizationBlockSize);
      }
      if (quantizationZeroPoints != null) {
        spec = spec.withZeroPoints(quantizationZeroPoints);
      }
      if (quantizationLmHead != null) {
        spec = spec.withLmHead(quantizationLmHead);
      }
      if (quantizationHeadBlockSize == null) {
        return spec;
      }
      if (!spec.lmHead()) {
        throw new IllegalArgumentException("quantization-head-block-size "
            + quantizationHeadBlockSize + " is for a quantized LM head, and"
            + " quantization-lm-head false leaves it as the checkpoint has it (set"
            + " quantization-head-block-size auto, or quantization-lm-head auto or true)");
      }
      return spec.withHeadBlockSize(quantizationHeadBlockSize);
    }
  }
}
