package dev.radixserve.server.cli;

import dev.radixserve.server.config.ServerConfig;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.Function;
import picocli.CommandLine.Command;
import picocli.CommandLine.IDefaultValueProvider;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.Spec;

/**
 * {@code radixserve serve}: resolves the configuration (flag > environment > file > default),
 * then prints it or starts the server and blocks until it stops. SIGTERM and Ctrl-C drain
 * running requests within {@code --shutdown-timeout}, then the command returns 0 (a shutdown
 * asked for and carried out is a success, as for uvicorn or nginx).
 *
 * <p>The setting flags are plain strings here: the parsing and validation of every layer lives
 * in {@link ConfigKey} so a bad value reads the same wherever it came from.
 */
@Command(
    name = "serve",
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    sortOptions = false,
    showDefaultValues = true,
    description = "Start the OpenAI-compatible HTTP server (/v1/completions, "
        + "/v1/chat/completions, /v1/models, /health, /metrics).",
    footer = {
        "",
        "Every setting can also be given as an environment variable RADIXSERVE_<FLAG> in upper "
            + "snake case (e.g. RADIXSERVE_MAX_NUM_SEQS=32) or as a key of the same name in the "
            + "YAML file of --config (e.g. max-num-seqs: 32).",
        "Precedence: flag > environment variable > config file > default.",
        "Sizes take a suffix k, m, g (binary: 1k = 1024); durations a unit ms, s, m, h."})
final class ServeCommand implements Callable<Integer> {

  @Spec
  private CommandSpec spec;

  @Option(names = "--host", paramLabel = "ADDR", order = 1,
      description = "Address to bind. Env RADIXSERVE_HOST.")
  String host;

  @Option(names = "--port", paramLabel = "PORT", order = 2,
      description = "HTTP port (0 picks a free one). Env RADIXSERVE_PORT.")
  String port;

  @Option(names = "--model", paramLabel = "DIR|FILE.gguf", order = 3,
      description = "A model directory in Hugging Face layout (config.json, safetensors, "
          + "tokenizer files; GPT-2, Llama, Qwen2/3, Mistral, Phi-3, Gemma 2/3), or a GGUF file "
          + "(llama, qwen2, qwen3, phi3, gemma2, gemma3, gpt2; the first of its shards). "
          + "Default: the embedded random-weight GPT-2. Env RADIXSERVE_MODEL.")
  String model;

  @Option(names = "--served-model-name", paramLabel = "NAME", order = 4,
      description = "Model id that clients send and /v1/models lists. Default: the model "
          + "directory's name. Env RADIXSERVE_SERVED_MODEL_NAME.")
  String servedModelName;

  @Option(names = "--block-size", paramLabel = "TOKENS", order = 5,
      description = "Tokens per KV-cache block. Env RADIXSERVE_BLOCK_SIZE.")
  String blockSize;

  @Option(names = "--kv-cache-memory", paramLabel = "SIZE|auto", order = 6,
      description = "KV-cache pool budget (e.g. 512m, 4g), or auto: the model's whole context for"
          + " one sequence (at least 512m), at most half the memory free after the model (on the"
          + " CPU in fp32; 512m on a GPU or in 16 bits); ignored when --num-blocks is set. Env"
          + " RADIXSERVE_KV_CACHE_MEMORY.")
  String kvCacheMemory;

  @Option(names = "--num-blocks", paramLabel = "N", order = 7,
      description = "KV-cache blocks; overrides --kv-cache-memory. Default: derived from "
          + "--kv-cache-memory. Env RADIXSERVE_NUM_BLOCKS.")
  String numBlocks;

  @Option(names = "--max-num-seqs", paramLabel = "N", order = 8,
      description = "Most sequences in one batch. Env RADIXSERVE_MAX_NUM_SEQS.")
  String maxNumSeqs;

  @Option(names = "--max-num-batched-tokens", paramLabel = "N", order = 9,
      description = "Token budget of one step (prefill chunks + decodes). "
          + "Env RADIXSERVE_MAX_NUM_BATCHED_TOKENS.")
  String maxNumBatchedTokens;

  @Option(names = "--max-model-len", paramLabel = "TOKENS", order = 10,
      description = "Longest prompt + completion. Default: the model's n_positions. "
          + "Env RADIXSERVE_MAX_MODEL_LEN.")
  String maxModelLen;

  @Option(names = "--schedule-policy", paramLabel = "lpm|fcfs", order = 11,
      description = "Admission order: lpm = longest cached prefix first (requests sharing a "
          + "prompt that is not cached yet wait for one of them to compute it), fcfs = arrival "
          + "order. Env RADIXSERVE_SCHEDULE_POLICY.")
  String schedulePolicy;

  @Option(names = "--prefix-caching", paramLabel = "true|false", order = 12, arity = "0..1",
      fallbackValue = "true",
      description = "Reuse cached prompt prefixes across requests. "
          + "Env RADIXSERVE_PREFIX_CACHING.")
  String prefixCaching;

  @Option(names = "--api-key", paramLabel = "KEY", order = 13,
      description = "Require 'Authorization: Bearer KEY'. Default: no authentication. "
          + "Env RADIXSERVE_API_KEY.")
  String apiKey;

  @Option(names = "--max-queued-requests", paramLabel = "N", order = 14,
      description = "Waiting requests beyond which new ones get 429. "
          + "Env RADIXSERVE_MAX_QUEUED_REQUESTS.")
  String maxQueuedRequests;

  @Option(names = "--threads", paramLabel = "N", order = 15,
      description = "ONNX Runtime intra-op threads (0 lets it choose). Env RADIXSERVE_THREADS.")
  String threads;

  @Option(names = "--max-request-body", paramLabel = "SIZE", order = 16,
      description = "Largest request body; larger ones get 413. Env RADIXSERVE_MAX_REQUEST_BODY.")
  String maxRequestBody;

  @Option(names = "--shutdown-timeout", paramLabel = "DURATION", order = 17,
      description = "How long SIGTERM / Ctrl-C waits for running requests. "
          + "Env RADIXSERVE_SHUTDOWN_TIMEOUT.")
  String shutdownTimeout;

  @Option(names = "--kv-events", paramLabel = "true|false", order = 20, arity = "0..1",
      fallbackValue = "true",
      description = "Publish KV cache events (vLLM's ZeroMQ/msgpack format) for cache-aware "
          + "routers such as llm-d. Env RADIXSERVE_KV_EVENTS.")
  String kvEvents;

  @Option(names = "--kv-events-endpoint", paramLabel = "ADDR", order = 21,
      description = "ZeroMQ PUB address: bound when it has a wildcard (tcp://*:5557), connected "
          + "otherwise. Env RADIXSERVE_KV_EVENTS_ENDPOINT.")
  String kvEventsEndpoint;

  @Option(names = "--kv-events-replay-endpoint", paramLabel = "ADDR", order = 22,
      description = "ZeroMQ ROUTER address (bound) serving replays of past batches. Default: "
          + "none. Env RADIXSERVE_KV_EVENTS_REPLAY_ENDPOINT.")
  String kvEventsReplayEndpoint;

  @Option(names = "--kv-events-topic", paramLabel = "TOPIC", order = 23,
      description = "First frame of every event message; llm-d expects "
          + "kv@<pod-ip>:<port>@<model>. Default: empty. Env RADIXSERVE_KV_EVENTS_TOPIC.")
  String kvEventsTopic;

  @Option(names = "--kv-events-queue-size", paramLabel = "N", order = 24,
      description = "Events waiting for the publisher thread; more are dropped and counted. "
          + "Env RADIXSERVE_KV_EVENTS_QUEUE_SIZE.")
  String kvEventsQueueSize;

  @Option(names = "--kv-events-encoding", paramLabel = "array|map", order = 25,
      description = "Events as tagged arrays (vLLM's classic shape, read by every router) or "
          + "tagged maps (vLLM since mid 2026). Env RADIXSERVE_KV_EVENTS_ENCODING.")
  String kvEventsEncoding;

  @Option(names = "--max-choices-per-request", paramLabel = "N", order = 30,
      description = "Most prompts × n in one request; larger requests get 400. "
          + "Env RADIXSERVE_MAX_CHOICES_PER_REQUEST.")
  String maxChoicesPerRequest;

  @Option(names = "--max-stop-length", paramLabel = "CHARS", order = 31,
      description = "Longest stop string (at most 4 per request); longer ones get 400. "
          + "Env RADIXSERVE_MAX_STOP_LENGTH.")
  String maxStopLength;

  @Option(names = "--prefill-chunk-size", paramLabel = "TOKENS", order = 32,
      description = "Most prompt tokens one sequence computes in one step; longer prompts are "
          + "prefilled over several steps so short requests are not held up. "
          + "Env RADIXSERVE_PREFILL_CHUNK_SIZE.")
  String prefillChunkSize;

  @Option(names = "--speculative", paramLabel = "auto|ngram|off", order = 56,
      description = "Speculative decoding: ngram drafts the next tokens from the sequence's own "
          + "prompt and output and from the prefix cache's token runs in its namespace, and "
          + "verifies them in one step (outputs unchanged); off decodes one token per step; "
          + "auto is ngram on the CPU and off on CUDA. Env RADIXSERVE_SPECULATIVE.")
  String speculative;

  @Option(names = "--speculative-max-tokens", paramLabel = "N", order = 57,
      description = "Most draft tokens one sequence verifies in one step (1..64). "
          + "Env RADIXSERVE_SPECULATIVE_MAX_TOKENS.")
  String speculativeMaxTokens;

  @Option(names = "--max-connections", paramLabel = "N", order = 33,
      description = "Open connections beyond which new ones get 503 and are closed. "
          + "Env RADIXSERVE_MAX_CONNECTIONS.")
  String maxConnections;

  @Option(names = "--idle-timeout", paramLabel = "DURATION", order = 34,
      description = "Closes a connection with no request in progress after this. "
          + "Env RADIXSERVE_IDLE_TIMEOUT.")
  String idleTimeout;

  @Option(names = "--header-timeout", paramLabel = "DURATION", order = 35,
      description = "A request's head must arrive within this once it starts (else 408). "
          + "Env RADIXSERVE_HEADER_TIMEOUT.")
  String headerTimeout;

  @Option(names = "--body-timeout", paramLabel = "DURATION", order = 36,
      description = "A request's body must arrive within this after its head (else 408). "
          + "Env RADIXSERVE_BODY_TIMEOUT.")
  String bodyTimeout;

  @Option(names = "--warmup", paramLabel = "true|false", order = 37, arity = "0..1",
      fallbackValue = "true",
      description = "Run a few forward steps before listening, so that the first requests do not"
          + " pay for compiling the attention kernel (about 1 s). Env RADIXSERVE_WARMUP.")
  String warmup;

  @Option(names = "--device", paramLabel = "cpu|cuda", order = 38,
      description = "Where the model runs: ONNX Runtime's CPU provider, or CUDA (needs the -Pcuda"
          + " jar, the CUDA 12 libraries and a driver). Env RADIXSERVE_DEVICE.")
  String device;

  @Option(names = "--dtype", paramLabel = "auto|float32|float16|bfloat16", order = 39,
      description = "Precision of the graph and the KV pool; auto: float32 on cpu, float16 on"
          + " cuda. Env RADIXSERVE_DTYPE.")
  String dtype;

  @Option(names = "--kv-cache-dtype", paramLabel = "auto|float32|bfloat16|float16|int8|fp8",
      order = 39,
      description = "What the KV pool stores keys and values in, apart from --dtype; auto (the"
          + " default): bfloat16 on the CPU beside quantized weights (int8, int4, a GPTQ/AWQ"
          + " checkpoint's or a GGUF file's blocks), else the graph's dtype. bfloat16/float16"
          + " halve the fp32 pool's bytes per token, int8/fp8 (e4m3fn, a scale per token and kv head) about quarter them; the fp32 CPU graph takes"
          + " all, cuda only its --dtype. Env RADIXSERVE_KV_CACHE_DTYPE.")
  String kvCacheDtype;

  @Option(names = "--cuda-device-id", paramLabel = "N", order = 40,
      description = "CUDA device to run on. Env RADIXSERVE_CUDA_DEVICE_ID.")
  String cudaDeviceId;

  @Option(names = "--cuda-tf32", paramLabel = "true|false", order = 41, arity = "0..1",
      fallbackValue = "true",
      description = "Let fp32 matrix products on CUDA use TF32 (faster, less exact; off for parity"
          + " with the CPU). Env RADIXSERVE_CUDA_TF32.")
  String cudaTf32;

  @Option(names = "--fair-share", paramLabel = "true|false", order = 42, arity = "0..1",
      fallbackValue = "true",
      description = "Share sequence slots fairly between clients: a client below its share "
          + "goes first and may preempt a client over its share. Env RADIXSERVE_FAIR_SHARE.")
  String fairShare;

  @Option(names = "--max-seqs-per-request", paramLabel = "N", order = 43,
      description = "Sequences one request runs at most while another request of its client "
          + "waits (default: a quarter of --max-num-seqs). Env RADIXSERVE_MAX_SEQS_PER_REQUEST.")
  String maxSeqsPerRequest;

  @Option(names = "--client-id-header", paramLabel = "NAME", order = 44,
      description = "Request header naming the client for fair shares (e.g. a gateway's user "
          + "header); without it the connection is the client. Env RADIXSERVE_CLIENT_ID_HEADER.")
  String clientIdHeader;

  @Option(names = "--kv-offload-memory", paramLabel = "SIZE", order = 50,
      description = "Host-memory tier below the KV pool: evicted blocks are kept here (e.g. 4g)"
          + " and loaded instead of recomputed. Default: 0 (off). Env RADIXSERVE_KV_OFFLOAD_MEMORY.")
  String kvOffloadMemory;

  @Option(names = "--weights-cache", paramLabel = "DIR", order = 92,
      description = "Keep the weights as ONNX Runtime maps them (quantized, converted) in this"
          + " directory, one file per checkpoint and quantization: a restart maps the file"
          + " instead of quantizing again. Default: none (a temporary file, deleted once"
          + " loaded). Env RADIXSERVE_WEIGHTS_CACHE.")
  String weightsCache;

  @Option(names = "--kv-offload-dir", paramLabel = "DIR", order = 51,
      description = "Disk tier below the KV pool: evicted blocks (and, at shutdown, the cached"
          + " ones) are written here; a restart with the same model reuses them. Default: none."
          + " Env RADIXSERVE_KV_OFFLOAD_DIR.")
  String kvOffloadDir;

  @Option(names = "--kv-offload-disk-size", paramLabel = "SIZE", order = 52,
      description = "Budget of the disk tier. Default: 16g. Env RADIXSERVE_KV_OFFLOAD_DISK_SIZE.")
  String kvOffloadDiskSize;

  @Option(names = "--kv-offload-disk-write", paramLabel = "all|reused", order = 53,
      description = "Which evicted blocks the disk tier takes: all, or only reused ones (a later"
          + " request's prefix hit, or loaded from a tier). Default: reused."
          + " Env RADIXSERVE_KV_OFFLOAD_DISK_WRITE.")
  String kvOffloadDiskWrite;

  @Option(names = "--quantization", paramLabel = "auto|none|int8|int4", order = 45,
      description = "Store the linear layers' weights block-quantized (ONNX Runtime's "
          + "MatMulNBits), quantized at load from the checkpoint; embeddings stay as they are. "
          + "auto (the default): none, except a GGUF file in blocks MatMulNBits cannot take bit "
          + "for bit (K-quants, mixes), which takes the nearest of int8/int4 (Q4_K layers on "
          + "their own 4-bit codes); none serves such a file's dequantized weights at fp32. Env "
          + "RADIXSERVE_QUANTIZATION.")
  String quantization;

  @Option(names = "--quantization-block-size", paramLabel = "N|auto", order = 46,
      description = "Weights per quantization block along the input dimension (16..256, a power"
          + " of two that divides every layer's input width). auto (the default): 128 for int4, 64 "
          + "for int8 (halved where it does not divide a layer's input width). Env "
          + "RADIXSERVE_QUANTIZATION_BLOCK_SIZE.")
  String quantizationBlockSize;

  @Option(names = "--quantization-zero-points", paramLabel = "true|false|auto", order = 47,
      arity = "0..1", fallbackValue = "true",
      description = "Asymmetric blocks (a zero point per block) instead of symmetric ones. auto "
          + "(the default): with int4, not with int8. Env RADIXSERVE_QUANTIZATION_ZERO_POINTS.")
  String quantizationZeroPoints;

  @Option(names = "--quantization-lm-head", paramLabel = "true|false|auto", order = 48,
      arity = "0..1", fallbackValue = "true",
      description = "Quantize the LM head too. auto (the default): int8, with int8 and with int4 "
          + "layers alike; true: in the layers' own mode; false: as the checkpoint has it. Env "
          + "RADIXSERVE_QUANTIZATION_LM_HEAD.")
  String quantizationLmHead;

  @Option(names = "--quantization-head-block-size", paramLabel = "N|auto", order = 49,
      description = "The LM head's own quantization block size (16..256, dividing the hidden "
          + "width). auto (the default): an int8 head in blocks of 256 "
          + "beside int4 layers and of 64 beside int8 ones (halved where that does not divide "
          + "the hidden width, not below --quantization-block-size), an int4 head in the "
          + "layers' block. Env RADIXSERVE_QUANTIZATION_HEAD_BLOCK_SIZE.")
  String quantizationHeadBlockSize;

  @Option(names = "--tool-call-parser", paramLabel = "auto|hermes|llama3_json|mistral|generic",
      order = 54,
      description = "Tool-call syntax of chat replies: auto (the chat template's family: hermes "
          + "for Qwen, llama3_json for Llama 3.1+, mistral; else generic). Env "
          + "RADIXSERVE_TOOL_CALL_PARSER.")
  String toolCallParser;

  @Option(names = "--reasoning-parser", paramLabel = "auto|qwen3|deepseek_r1|none", order = 55,
      description = "How chat replies split into reasoning_content and content (vLLM's names): "
          + "auto (the chat template's family: deepseek_r1 for DeepSeek-R1 templates, qwen3 for "
          + "other templates that write <think>; else none). Env RADIXSERVE_REASONING_PARSER.")
  String reasoningParser;

  @Option(names = "--config", paramLabel = "FILE", order = 90,
      description = "YAML file setting any of the above by name (see config/radixserve.yaml). "
          + "Env RADIXSERVE_CONFIG.")
  Path configFile;

  @Option(names = "--print-config", order = 91,
      description = "Print the effective configuration as YAML (a valid --config file) and exit.")
  boolean printConfig;

  private final Map<String, String> env;
  private final Function<ServerConfig, RunningServer> launcher;

  /**
   * @param env the process environment
   * @param launcher starts the server; called once, only when not printing the configuration
   */
  ServeCommand(Map<String, String> env, Function<ServerConfig, RunningServer> launcher) {
    this.env = Map.copyOf(env);
    this.launcher = launcher;
  }

  /** Shows the built-in defaults in {@code --help}; resolution itself is {@link ConfigResolver}'s. */
  static IDefaultValueProvider builtInDefaults() {
    ServerConfig defaults = ServerConfig.defaults();
    return (ArgSpec arg) -> {
      if (!(arg instanceof OptionSpec option)) {
        return null;
      }
      return ConfigKey.byKey(option.longestName().substring(2))
          .map(key -> key.format(defaults))
          .filter(value -> shownAsDefault(option, value))
          .map(String::valueOf)
          .orElse(null);
    };
  }

  // The embedded model's name is a derived default; --served-model-name documents it in words.
  private static boolean shownAsDefault(OptionSpec option, Object value) {
    return value != null && !option.longestName().equals("--served-model-name");
  }

  @Override
  public Integer call() throws InterruptedException {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    for (String unknown : ConfigResolver.unknownEnvVars(env)) {
      err.println("radixserve: warning: ignoring environment variable " + unknown
          + " (no such setting; known keys: " + ConfigKey.allKeys() + ")");
    }
    ServerConfig config = ConfigResolver.resolve(flagsGiven(), env, configPath());
    if (printConfig) {
      out.print(ConfigFile.write(config));
      out.flush();
      return 0;
    }
    RunningServer server = launcher.apply(config);
    Runnable drain = () -> server.shutdown(config.shutdownTimeout());
    Runtime.getRuntime().addShutdownHook(new Thread(drain, "radixserve-shutdown"));
    ShutdownSignals.install(drain);
    out.printf("radixserve: serving %s on http://%s:%d%n", config.servedModelName(),
        config.host(), server.port());
    out.flush();
    server.awaitTermination();
    return 0;
  }

  private Path configPath() {
    if (configFile != null) {
      return configFile;
    }
    String fromEnv = env.get(ConfigResolver.CONFIG_ENV);
    return fromEnv == null || fromEnv.isEmpty() ? null : Path.of(fromEnv);
  }

  /** The raw text of each setting flag given on the command line. */
  private Map<ConfigKey, String> flagsGiven() {
    ParseResult parsed = spec.commandLine().getParseResult();
    Map<ConfigKey, String> flags = new EnumMap<>(ConfigKey.class);
    for (ConfigKey key : ConfigKey.values()) {
      if (parsed.hasMatchedOption(key.flag())) {
        OptionSpec option = parsed.matchedOption(key.flag());
        List<String> values = option.stringValues();
        flags.put(key, values.isEmpty() ? option.fallbackValue() : values.getLast());
      }
    }
    return flags;
  }
}
