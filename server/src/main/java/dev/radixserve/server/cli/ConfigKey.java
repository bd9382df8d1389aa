package dev.radixserve.server.cli;

import dev.radixserve.model.Device;
import dev.radixserve.model.graph.GraphDtype;
import dev.radixserve.model.graph.KvDtype;
import dev.radixserve.model.quant.QuantMode;
import dev.radixserve.server.config.KvEventEncoding;
import dev.radixserve.server.config.SchedulePolicy;
import dev.radixserve.server.config.ReasoningParserSetting;
import dev.radixserve.server.config.ToolCallParserSetting;
import dev.radixserve.server.config.ServerConfig;
import dev.radixserve.server.kvtier.DiskWritePolicy;
import dev.radixserve.server.spec.SpeculativeMode;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * Every setting of {@link ServerConfig} under the one name it has everywhere: the flag
 * ({@code --max-num-seqs}), the config-file key ({@code max-num-seqs}) and, in upper snake case,
 * the environment variable ({@code RADIXSERVE_MAX_NUM_SEQS}). Each knows how to parse its text
 * into the builder and how to write the effective value back (for {@code --print-config}).
 */
enum ConfigKey {
  HOST("host", (b, v) -> b.host = ConfigValues.text(v), ServerConfig::host),
  PORT("port", (b, v) -> b.port = ConfigValues.integer(v), ServerConfig::port),
  MODEL("model", (b, v) -> b.model = ConfigValues.directory(v),
      c -> c.model() == null ? null : c.model().toString()),
  SERVED_MODEL_NAME("served-model-name", (b, v) -> b.servedModelName = ConfigValues.text(v),
      ServerConfig::servedModelName),
  BLOCK_SIZE("block-size", (b, v) -> b.blockSize = ConfigValues.integer(v), ServerConfig::blockSize),
  KV_CACHE_MEMORY("kv-cache-memory",
      (b, v) -> b.kvCacheMemoryBytes = v.strip().equals("auto") ? ServerConfig.KV_CACHE_MEMORY_AUTO
          : ConfigValues.bytes(v),
      c -> c.kvCacheMemoryBytes() == ServerConfig.KV_CACHE_MEMORY_AUTO ? "auto"
          : ConfigValues.formatBytes(c.kvCacheMemoryBytes())),
  NUM_BLOCKS("num-blocks", (b, v) -> b.numBlocks = ConfigValues.integer(v), ServerConfig::numBlocks),
  MAX_NUM_SEQS("max-num-seqs", (b, v) -> b.maxNumSeqs = ConfigValues.integer(v),
      ServerConfig::maxNumSeqs),
  MAX_NUM_BATCHED_TOKENS("max-num-batched-tokens",
      (b, v) -> b.maxNumBatchedTokens = ConfigValues.integer(v), ServerConfig::maxNumBatchedTokens),
  MAX_MODEL_LEN("max-model-len", (b, v) -> b.maxModelLen = ConfigValues.integer(v),
      ServerConfig::maxModelLen),
  SCHEDULE_POLICY("schedule-policy",
      (b, v) -> b.schedulePolicy = ConfigValues.choice(v, SchedulePolicy.class),
      c -> ConfigValues.formatChoice(c.schedulePolicy())),
  PREFIX_CACHING("prefix-caching", (b, v) -> b.prefixCaching = ConfigValues.bool(v),
      ServerConfig::prefixCaching),
  API_KEY("api-key", (b, v) -> b.apiKey = ConfigValues.text(v), ServerConfig::apiKey),
  MAX_QUEUED_REQUESTS("max-queued-requests", (b, v) -> b.maxQueuedRequests = ConfigValues.integer(v),
      ServerConfig::maxQueuedRequests),
  THREADS("threads", (b, v) -> b.threads = ConfigValues.integer(v), ServerConfig::threads),
  MAX_REQUEST_BODY("max-request-body", (b, v) -> b.maxRequestBodyBytes = ConfigValues.bytes(v),
      c -> ConfigValues.formatBytes(c.maxRequestBodyBytes())),
  SHUTDOWN_TIMEOUT("shutdown-timeout", (b, v) -> b.shutdownTimeout = ConfigValues.duration(v),
      c -> ConfigValues.formatDuration(c.shutdownTimeout())),
  KV_EVENTS("kv-events", (b, v) -> b.kvEvents = ConfigValues.bool(v), c -> c.kvEvents().enabled()),
  KV_EVENTS_ENDPOINT("kv-events-endpoint", (b, v) -> b.kvEventsEndpoint = ConfigValues.text(v),
      c -> c.kvEvents().endpoint()),
  KV_EVENTS_REPLAY_ENDPOINT("kv-events-replay-endpoint",
      (b, v) -> b.kvEventsReplayEndpoint = ConfigValues.text(v), c -> c.kvEvents().replayEndpoint()),
  KV_EVENTS_TOPIC("kv-events-topic", (b, v) -> b.kvEventsTopic = ConfigValues.text(v),
      c -> c.kvEvents().topic()),
  KV_EVENTS_QUEUE_SIZE("kv-events-queue-size",
      (b, v) -> b.kvEventsQueueSize = ConfigValues.integer(v), c -> c.kvEvents().queueSize()),
  KV_EVENTS_ENCODING("kv-events-encoding",
      (b, v) -> b.kvEventsEncoding = ConfigValues.choice(v, KvEventEncoding.class),
      c -> ConfigValues.formatChoice(c.kvEvents().encoding())),
  MAX_CHOICES_PER_REQUEST("max-choices-per-request",
      (b, v) -> b.maxChoicesPerRequest = ConfigValues.integer(v), ServerConfig::maxChoicesPerRequest),
  MAX_STOP_LENGTH("max-stop-length", (b, v) -> b.maxStopLength = ConfigValues.integer(v),
      ServerConfig::maxStopLength),
  PREFILL_CHUNK_SIZE("prefill-chunk-size", (b, v) -> b.prefillChunkSize = ConfigValues.integer(v),
      ServerConfig::prefillChunkSize),
  MAX_CONNECTIONS("max-connections", (b, v) -> b.maxConnections = ConfigValues.integer(v),
      ServerConfig::maxConnections),
  IDLE_TIMEOUT("idle-timeout", (b, v) -> b.idleTimeout = ConfigValues.duration(v),
      c -> ConfigValues.formatDuration(c.idleTimeout())),
  HEADER_TIMEOUT("header-timeout", (b, v) -> b.headerTimeout = ConfigValues.duration(v),
      c -> ConfigValues.formatDuration(c.headerTimeout())),
  BODY_TIMEOUT("body-timeout", (b, v) -> b.bodyTimeout = ConfigValues.duration(v),
      c -> ConfigValues.formatDuration(c.bodyTimeout())),
  WARMUP("warmup", (b, v) -> b.warmup = ConfigValues.bool(v), ServerConfig::warmup),
  DEVICE("device", (b, v) -> b.device = ConfigValues.choice(v, Device.Kind.class),
      c -> ConfigValues.formatChoice(c.device().kind())),
  DTYPE("dtype", (b, v) -> b.dtype = v.strip().equalsIgnoreCase("auto") ? null
      : ConfigValues.choice(v, GraphDtype.class), c -> c.device().dtype().settingName()),
  KV_CACHE_DTYPE("kv-cache-dtype", (b, v) -> b.kvCacheDtype = v.strip().equalsIgnoreCase("auto")
      ? null : ConfigValues.choice(v, KvDtype.class),
      c -> c.kvCacheDtypeAuto() ? "auto" : c.kvCacheDtype().settingName()),
  CUDA_DEVICE_ID("cuda-device-id", (b, v) -> b.cudaDeviceId = ConfigValues.integer(v),
      c -> c.device().cuda().deviceId()),
  CUDA_TF32("cuda-tf32", (b, v) -> b.cudaTf32 = ConfigValues.bool(v),
      c -> c.device().cuda().tf32()),
  FAIR_SHARE("fair-share", (b, v) -> b.fairShare = ConfigValues.bool(v), ServerConfig::fairShare),
  MAX_SEQS_PER_REQUEST("max-seqs-per-request",
      (b, v) -> b.maxSeqsPerRequest = ConfigValues.integer(v), ServerConfig::maxSeqsPerRequest),
  CLIENT_ID_HEADER("client-id-header", (b, v) -> b.clientIdHeader = ConfigValues.text(v),
      ServerConfig::clientIdHeader),
  KV_OFFLOAD_MEMORY("kv-offload-memory", (b, v) -> b.kvOffloadMemoryBytes = ConfigValues.bytes(v),
      c -> ConfigValues.formatBytes(c.kvOffloadMemoryBytes())),
  KV_OFFLOAD_DIR("kv-offload-dir", (b, v) -> b.kvOffloadDir = Path.of(ConfigValues.text(v)),
      c -> c.kvOffloadDir() == null ? null : c.kvOffloadDir().toString()),
  WEIGHTS_CACHE("weights-cache", (b, v) -> b.weightsCache = Path.of(ConfigValues.text(v)),
      c -> c.weightsCache() == null ? null : c.weightsCache().toString()),
  KV_OFFLOAD_DISK_SIZE("kv-offload-disk-size",
      (b, v) -> b.kvOffloadDiskBytes = ConfigValues.bytes(v),
      c -> ConfigValues.formatBytes(c.kvOffloadDiskBytes())),
  KV_OFFLOAD_DISK_WRITE("kv-offload-disk-write",
      (b, v) -> b.kvOffloadDiskWrite = ConfigValues.choice(v, DiskWritePolicy.class),
      c -> ConfigValues.formatChoice(c.kvOffloadDiskWrite())),
  QUANTIZATION("quantization",
      (b, v) -> b.quantization = ConfigValues.choiceOrAuto(v, QuantMode.class),
      c -> c.quantizationAuto() ? "auto" : ConfigValues.formatChoice(c.quantization().mode())),
  QUANTIZATION_BLOCK_SIZE("quantization-block-size",
      (b, v) -> b.quantizationBlockSize = v.strip().equalsIgnoreCase("auto") ? null
          : ConfigValues.integer(v),
      c -> c.quantization().hasDefaultBlockSize() ? "auto" : c.quantization().blockSize()),
  QUANTIZATION_ZERO_POINTS("quantization-zero-points",
      (b, v) -> b.quantizationZeroPoints = v.strip().equalsIgnoreCase("auto") ? null
          : ConfigValues.bool(v),
      c -> c.quantization().hasDefaultZeroPoints() ? "auto" : c.quantization().zeroPoints()),
  QUANTIZATION_LM_HEAD("quantization-lm-head",
      (b, v) -> b.quantizationLmHead = v.strip().equalsIgnoreCase("auto") ? null
          : ConfigValues.bool(v),
      c -> c.quantizationHead().lmHead() == null ? "auto" : c.quantizationHead().lmHead()),
  QUANTIZATION_HEAD_BLOCK_SIZE("quantization-head-block-size",
      (b, v) -> b.quantizationHeadBlockSize = v.strip().equalsIgnoreCase("auto") ? null
          : ConfigValues.integer(v),
      c -> c.quantizationHead().blockSize() == null ? "auto"
          : c.quantizationHead().blockSize()),
  TOOL_CALL_PARSER("tool-call-parser",
      (b, v) -> b.toolCallParser = ConfigValues.choice(v, ToolCallParserSetting.class),
      c -> ConfigValues.formatChoice(c.toolCallParser())),
  REASONING_PARSER("reasoning-parser",
      (b, v) -> b.reasoningParser = ConfigValues.choice(v, ReasoningParserSetting.class),
      c -> ConfigValues.formatChoice(c.reasoningParser())),
  // YAML 1.1 reads an unquoted `off` as false: a config file's `speculative: off` means off
  SPECULATIVE("speculative",
      (b, v) -> b.speculative = "false".equals(v.strip()) ? SpeculativeMode.OFF
          : ConfigValues.choice(v, SpeculativeMode.class),
      c -> ConfigValues.formatChoice(c.speculation().mode())),
  SPECULATIVE_MAX_TOKENS("speculative-max-tokens",
      (b, v) -> b.speculativeMaxTokens = ConfigValues.integer(v),
      c -> c.speculation().maxTokens());

  static final String ENV_PREFIX = "RADIXSERVE_";

  private final String key;
  private final BiConsumer<ServerConfig.Builder, String> parser;
  private final Function<ServerConfig, Object> formatter;

  ConfigKey(String key, BiConsumer<ServerConfig.Builder, String> parser,
      Function<ServerConfig, Object> formatter) {
    this.key = key;
    this.parser = parser;
    this.formatter = formatter;
  }

  /** The kebab-case name: config-file key, and the flag without its {@code --}. */
  String key() {
    return key;
  }

  String flag() {
    return "--" + key;
  }

  String envVar() {
    return envVarOf(key);
  }

  static String envVarOf(String kebabKey) {
    return ENV_PREFIX + kebabKey.toUpperCase(Locale.ROOT).replace('-', '_');
  }

  /** Parses {@code raw} into the builder; throws {@link ConfigValues.BadValue} if it does not parse. */
  void apply(ServerConfig.Builder builder, String raw) {
    parser.accept(builder, raw);
  }

  /** The effective value as YAML writes it: a String, Integer, Boolean, or null when unset. */
  Object format(ServerConfig config) {
    return formatter.apply(config);
  }

  static Optional<ConfigKey> byKey(String key) {
    return Arrays.stream(values()).filter(k -> k.key.equals(key)).findFirst();
  }

  static String allKeys() {
    return Arrays.stream(values()).map(ConfigKey::key).collect(Collectors.joining(", "));
  }
}
