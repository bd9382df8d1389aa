package dev.radixserve.server.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.server.config.KvEventEncoding;
import dev.radixserve.server.config.KvEventsConfig;
import dev.radixserve.server.config.SchedulePolicy;
import dev.radixserve.model.quant.QuantMode;
import dev.radixserve.model.quant.QuantSpec;
import dev.radixserve.server.config.ServerConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Flag > environment variable > config file > built-in default, one key at a time. */
class ConfigPrecedenceTest {

  @TempDir
  Path dir;

  private Path file(String yaml) throws IOException {
    Path f = dir.resolve("radixserve.yaml");
    Files.writeString(f, yaml);
    return f;
  }

  @Test
  void nothingGivenIsTheBuiltInDefault() {
    assertEquals(ServerConfig.defaults(), ConfigResolver.resolve(Map.of(), Map.of(), null));
  }

  @Test
  void eachLayerOverridesTheOnesBelow() throws IOException {
    Path f = file("port: 1001\nmax-num-seqs: 7\nschedule-policy: fcfs\nthreads: 3\n");
    Map<String, String> env = Map.of("RADIXSERVE_PORT", "2002", "RADIXSERVE_MAX_NUM_SEQS", "8");
    Map<ConfigKey, String> flags = Map.of(ConfigKey.PORT, "3003");

    ServerConfig c = ConfigResolver.resolve(flags, env, f);
    assertEquals(3003, c.port());                          // flag beats env and file
    assertEquals(8, c.maxNumSeqs());                       // env beats file
    assertEquals(SchedulePolicy.FCFS, c.schedulePolicy()); // file beats default
    assertEquals(3, c.threads());
    assertEquals(2048, c.maxNumBatchedTokens());           // default

    assertEquals(2002, ConfigResolver.resolve(Map.of(), env, f).port());
    assertEquals(1001, ConfigResolver.resolve(Map.of(), Map.of(), f).port());
    assertEquals(8000, ConfigResolver.resolve(Map.of(), Map.of(), null).port());
  }

  @Test
  void anEmptyEnvironmentVariableSetsNothing() throws IOException {
    ServerConfig c = ConfigResolver.resolve(Map.of(), Map.of("RADIXSERVE_PORT", ""), file("port: 1001\n"));
    assertEquals(1001, c.port());
  }

  @Test
  void nullInTheFileLeavesTheDefault() throws IOException {
    ServerConfig c = ConfigResolver.resolve(Map.of(), Map.of(), file("num-blocks: null\napi-key: ~\n"));
    assertNull(c.numBlocks());
    assertNull(c.apiKey());
  }

  @Test
  void everyKeyIsSettableFromEachLayer() throws IOException {
    Path model = Files.createDirectory(dir.resolve("gpt2"));
    Map<ConfigKey, String> values = new java.util.EnumMap<>(ConfigKey.class);
    values.put(ConfigKey.HOST, "127.0.0.1");
    values.put(ConfigKey.PORT, "0");
    values.put(ConfigKey.MODEL, model.toString());
    values.put(ConfigKey.SERVED_MODEL_NAME, "my-gpt");
    values.put(ConfigKey.BLOCK_SIZE, "32");
    values.put(ConfigKey.KV_CACHE_MEMORY, "2g");
    values.put(ConfigKey.NUM_BLOCKS, "99");
    values.put(ConfigKey.MAX_NUM_SEQS, "5");
    values.put(ConfigKey.MAX_NUM_BATCHED_TOKENS, "512");
    values.put(ConfigKey.MAX_MODEL_LEN, "256");
    values.put(ConfigKey.SCHEDULE_POLICY, "FCFS");
    values.put(ConfigKey.PREFIX_CACHING, "false");
    values.put(ConfigKey.API_KEY, "sk-test");
    values.put(ConfigKey.MAX_QUEUED_REQUESTS, "9");
    values.put(ConfigKey.THREADS, "2");
    values.put(ConfigKey.MAX_REQUEST_BODY, "64k");
    values.put(ConfigKey.SHUTDOWN_TIMEOUT, "1500ms");
    values.put(ConfigKey.KV_EVENTS, "true");
    values.put(ConfigKey.KV_EVENTS_ENDPOINT, "tcp://router:5557");
    values.put(ConfigKey.KV_EVENTS_REPLAY_ENDPOINT, "tcp://*:5558");
    values.put(ConfigKey.KV_EVENTS_TOPIC, "kv@10.0.0.7:8000@gpt2");
    values.put(ConfigKey.KV_EVENTS_QUEUE_SIZE, "512");
    values.put(ConfigKey.KV_EVENTS_ENCODING, "MAP");
    values.put(ConfigKey.MAX_CHOICES_PER_REQUEST, "12");
    values.put(ConfigKey.MAX_STOP_LENGTH, "40");
    values.put(ConfigKey.PREFILL_CHUNK_SIZE, "128");
    values.put(ConfigKey.MAX_CONNECTIONS, "77");
    values.put(ConfigKey.IDLE_TIMEOUT, "2m");
    values.put(ConfigKey.HEADER_TIMEOUT, "3s");
    values.put(ConfigKey.BODY_TIMEOUT, "250ms");
    values.put(ConfigKey.WARMUP, "false");
    values.put(ConfigKey.DEVICE, "cuda");
    values.put(ConfigKey.DTYPE, "bfloat16");
    values.put(ConfigKey.CUDA_DEVICE_ID, "3");
    values.put(ConfigKey.CUDA_TF32, "true");
    values.put(ConfigKey.FAIR_SHARE, "false");
    values.put(ConfigKey.MAX_SEQS_PER_REQUEST, "3");
    values.put(ConfigKey.CLIENT_ID_HEADER, "X-User");
    values.put(ConfigKey.KV_OFFLOAD_MEMORY, "3g");
    values.put(ConfigKey.KV_OFFLOAD_DIR, "/var/cache/radixserve-kv");
    values.put(ConfigKey.KV_OFFLOAD_DISK_SIZE, "100g");
    values.put(ConfigKey.KV_OFFLOAD_DISK_WRITE, "all");
    values.put(ConfigKey.QUANTIZATION, "int4");
    values.put(ConfigKey.QUANTIZATION_BLOCK_SIZE, "64");
    values.put(ConfigKey.QUANTIZATION_ZERO_POINTS, "true");
    values.put(ConfigKey.QUANTIZATION_LM_HEAD, "true");
    values.put(ConfigKey.QUANTIZATION_HEAD_BLOCK_SIZE, "128");
    values.put(ConfigKey.TOOL_CALL_PARSER, "llama3_json");
    values.put(ConfigKey.REASONING_PARSER, "deepseek_r1");
    values.put(ConfigKey.KV_CACHE_DTYPE, "bfloat16");
    values.put(ConfigKey.WEIGHTS_CACHE, "/var/cache/radixserve-weights");
    values.put(ConfigKey.SPECULATIVE, "ngram");
    values.put(ConfigKey.SPECULATIVE_MAX_TOKENS, "6");
    assertEquals(ConfigKey.values().length, values.size());

    ServerConfig expected = new ServerConfig("127.0.0.1", 0, model, "my-gpt", 32, 2L << 30, 99, 5,
        512, 256, SchedulePolicy.FCFS, false, "sk-test", 9, 2, 64L << 10, Duration.ofMillis(1500),
        new KvEventsConfig(true, "tcp://router:5557", "tcp://*:5558", "kv@10.0.0.7:8000@gpt2", 512,
            KvEventEncoding.MAP),
        12, 40, 128, 77, Duration.ofMinutes(2), Duration.ofSeconds(3), Duration.ofMillis(250), false,
        new dev.radixserve.model.Device(dev.radixserve.model.Device.Kind.CUDA,
            dev.radixserve.model.graph.GraphDtype.BFLOAT16,
            new dev.radixserve.model.ort.CudaProvider.Settings(3, true)),
        false, 3, "X-User",
        3L << 30, Path.of("/var/cache/radixserve-kv"), 100L << 30,
        dev.radixserve.server.kvtier.DiskWritePolicy.ALL,
        // on CUDA: no accuracy_level
        new QuantSpec(QuantMode.INT4, 64, true, QuantMode.INT4, 128, 0), false,
        new QuantSpec.HeadSetting(true, 128),
        dev.radixserve.server.config.ToolCallParserSetting.LLAMA3_JSON,
        dev.radixserve.server.config.ReasoningParserSetting.DEEPSEEK_R1,
        dev.radixserve.model.graph.KvDtype.BFLOAT16, false, Path.of("/var/cache/radixserve-weights"),
        dev.radixserve.server.spec.Speculation.ngram(6));

    assertEquals(expected, ConfigResolver.resolve(values, Map.of(), null));

    Map<String, String> env = new java.util.HashMap<>();
    StringBuilder yaml = new StringBuilder();
    values.forEach((k, v) -> {
      env.put(k.envVar(), v);
      yaml.append(k.key()).append(": \"").append(v).append("\"\n");
    });
    assertEquals(expected, ConfigResolver.resolve(Map.of(), env, null));
    assertEquals(expected, ConfigResolver.resolve(Map.of(), Map.of(), file(yaml.toString())));
  }

  /** auto: an int8 head under int8 and int4 layers; true: the layers' mode; false: none. */
  @Test
  void lmHeadAutoIsInt8UnderEitherMode() {
    for (QuantMode mode : new QuantMode[] {QuantMode.INT8, QuantMode.INT4}) {
      Map<ConfigKey, String> values = new java.util.HashMap<>();
      values.put(ConfigKey.QUANTIZATION, mode.label());
      assertEquals(QuantMode.INT8,
          ConfigResolver.resolve(values, Map.of(), null).quantization().headMode());
      values.put(ConfigKey.QUANTIZATION_LM_HEAD, "true");
      assertEquals(mode, ConfigResolver.resolve(values, Map.of(), null).quantization().headMode());
      values.put(ConfigKey.QUANTIZATION_LM_HEAD, "false");
      assertEquals(QuantMode.NONE,
          ConfigResolver.resolve(values, Map.of(), null).quantization().headMode());
    }
  }

  /**
   * The head's block size: auto until set; a set size is checked like the layers'; a size for a
   * head left unquantized is refused with the reason, not ignored.
   */
  @Test
  void headBlockSizeIsAutoUntilSetAndNeedsAQuantizedHead() {
    Map<ConfigKey, String> values = new java.util.HashMap<>();
    values.put(ConfigKey.QUANTIZATION, "int4");
    assertEquals(0, ConfigResolver.resolve(values, Map.of(), null).quantization().headBlockSize());
    values.put(ConfigKey.QUANTIZATION_HEAD_BLOCK_SIZE, "64");
    assertEquals(64, ConfigResolver.resolve(values, Map.of(), null).quantization().headBlockSize());
    values.put(ConfigKey.QUANTIZATION_HEAD_BLOCK_SIZE, "96");
    assertEquals("invalid value for quantization-head-block-size: 96 (allowed: auto, 16, 32, 64,"
        + " 128 or 256)", assertThrows(ConfigException.class,
            () -> ConfigResolver.resolve(values, Map.of(), null)).getMessage());
    values.put(ConfigKey.QUANTIZATION_HEAD_BLOCK_SIZE, "64");
    values.put(ConfigKey.QUANTIZATION_LM_HEAD, "false");
    ConfigException e = assertThrows(ConfigException.class,
        () -> ConfigResolver.resolve(values, Map.of(), null));
    assertTrue(e.getMessage().contains("quantization-head-block-size 64 is for a quantized LM"
        + " head"), e.getMessage());
    values.put(ConfigKey.QUANTIZATION_HEAD_BLOCK_SIZE, "auto");
    assertEquals(QuantMode.NONE,
        ConfigResolver.resolve(values, Map.of(), null).quantization().headMode());
  }

  /**
   * Not given and {@code auto} leave the choice to the model (a GGUF file in K-quants takes its
   * nearest mode); an explicit {@code none}, from a flag, the environment or the file, is told
   * apart and survives a round trip through the builder.
   */
  @Test
  void quantizationNotGivenIsAutoAndAnExplicitNoneIsNot() throws IOException {
    assertTrue(ServerConfig.defaults().quantizationAuto());
    assertTrue(ConfigResolver.resolve(Map.of(ConfigKey.QUANTIZATION, "auto"), Map.of(), null)
        .quantizationAuto());
    ServerConfig flag = ConfigResolver.resolve(Map.of(ConfigKey.QUANTIZATION, "none"), Map.of(),
        null);
    ServerConfig env = ConfigResolver.resolve(Map.of(), Map.of("RADIXSERVE_QUANTIZATION", "none"),
        null);
    ServerConfig file = ConfigResolver.resolve(Map.of(), Map.of(), file("quantization: none\n"));
    for (ServerConfig c : List.of(flag, env, file)) {
      assertFalse(c.quantizationAuto());
      assertEquals(QuantSpec.none(), c.quantization());
      assertFalse(c.toBuilder().build().quantizationAuto());
    }
    assertTrue(ServerConfig.defaults().toBuilder().build().quantizationAuto());
    assertEquals("auto", ConfigKey.QUANTIZATION.format(ServerConfig.defaults()));
    assertEquals("none", ConfigKey.QUANTIZATION.format(flag));
  }

  @Test
  void zeroPointsAutoAreOnUnderInt4Only() {
    Map<ConfigKey, String> values = new java.util.HashMap<>();
    values.put(ConfigKey.QUANTIZATION, "int4");
    assertTrue(ConfigResolver.resolve(values, Map.of(), null).quantization().zeroPoints());
    values.put(ConfigKey.QUANTIZATION_ZERO_POINTS, "false");
    assertFalse(ConfigResolver.resolve(values, Map.of(), null).quantization().zeroPoints());
    values.put(ConfigKey.QUANTIZATION, "int8");
    values.put(ConfigKey.QUANTIZATION_ZERO_POINTS, "auto");
    assertFalse(ConfigResolver.resolve(values, Map.of(), null).quantization().zeroPoints());
    values.put(ConfigKey.QUANTIZATION_ZERO_POINTS, "true");
    assertTrue(ConfigResolver.resolve(values, Map.of(), null).quantization().zeroPoints());
  }

  @Test
  void dtypeAutoFollowsTheDevice() {
    assertEquals(dev.radixserve.model.graph.GraphDtype.FLOAT32,
        ConfigResolver.resolve(Map.of(), Map.of(), null).device().dtype());
    assertEquals(dev.radixserve.model.graph.GraphDtype.FLOAT16, ConfigResolver.resolve(
        Map.of(ConfigKey.DEVICE, "cuda", ConfigKey.DTYPE, "auto"), Map.of(), null)
        .device().dtype());
  }

  @Test
  void envVarNamesAreUpperSnakeCaseOfTheKey() {
    assertEquals("RADIXSERVE_MAX_NUM_BATCHED_TOKENS", ConfigKey.MAX_NUM_BATCHED_TOKENS.envVar());
    assertEquals("--kv-cache-memory", ConfigKey.KV_CACHE_MEMORY.flag());
  }

  @Test
  void unknownFileKeyIsNamedWithTheAllowedKeys() throws IOException {
    Path f = file("port: 1\nmax-num-seq: 4\n");
    ConfigException e = assertThrows(ConfigException.class,
        () -> ConfigResolver.resolve(Map.of(), Map.of(), f));
    assertEquals("unknown key 'max-num-seq' in config file " + f + " (allowed keys: host, port, "
        + "model, served-model-name, block-size, kv-cache-memory, num-blocks, max-num-seqs, "
        + "max-num-batched-tokens, max-model-len, schedule-policy, prefix-caching, api-key, "
        + "max-queued-requests, threads, max-request-body, shutdown-timeout, kv-events, "
        + "kv-events-endpoint, kv-events-replay-endpoint, kv-events-topic, kv-events-queue-size, "
        + "kv-events-encoding, max-choices-per-request, max-stop-length, prefill-chunk-size, "
        + "max-connections, idle-timeout, header-timeout, body-timeout, warmup, device, dtype, "
        + "kv-cache-dtype, "
        + "cuda-device-id, cuda-tf32, fair-share, max-seqs-per-request, client-id-header, "
        + "kv-offload-memory, kv-offload-dir, weights-cache, kv-offload-disk-size, "
        + "kv-offload-disk-write, "
        + "quantization, "
        + "quantization-block-size, quantization-zero-points, quantization-lm-head, "
        + "quantization-head-block-size, tool-call-parser, reasoning-parser, speculative,"
        + " speculative-max-tokens)",
        e.getMessage());
  }

  @Test
  void badValuesNameKeySourceAndAllowedValues() throws IOException {
    Path f = file("prefix-caching: maybe\n");
    assertEquals("invalid value for prefix-caching from config file " + f
            + ": 'maybe' (allowed: true, false)",
        assertThrows(ConfigException.class, () -> ConfigResolver.resolve(Map.of(), Map.of(), f))
            .getMessage());
    assertEquals("invalid value for schedule-policy from environment variable "
            + "RADIXSERVE_SCHEDULE_POLICY: 'random' (allowed: lpm, fcfs)",
        assertThrows(ConfigException.class, () -> ConfigResolver.resolve(Map.of(),
            Map.of("RADIXSERVE_SCHEDULE_POLICY", "random"), null)).getMessage());
    assertEquals("invalid value for port from flag --port: 'eighty' (allowed: an integer)",
        assertThrows(ConfigException.class, () -> ConfigResolver.resolve(
            Map.of(ConfigKey.PORT, "eighty"), Map.of(), null)).getMessage());
    assertEquals("invalid value for port: 70000 (allowed: 0..65535)",
        assertThrows(ConfigException.class, () -> ConfigResolver.resolve(
            Map.of(ConfigKey.PORT, "70000"), Map.of(), null)).getMessage());
    assertEquals("invalid value for model from flag --model: '" + dir.resolve("absent")
            + "' (allowed: an existing directory holding config.json and model.safetensors, or a"
            + " .gguf file)",
        assertThrows(ConfigException.class, () -> ConfigResolver.resolve(
            Map.of(ConfigKey.MODEL, dir.resolve("absent").toString()), Map.of(), null)).getMessage());
  }

  @Test
  void kvEventAddressesMustBeZeroMqAddresses() {
    assertEquals("invalid value for kv-events-endpoint: localhost:5557 (allowed: a ZeroMQ address"
            + " tcp://HOST:PORT, ipc://PATH or inproc://NAME)",
        assertThrows(ConfigException.class, () -> ConfigResolver.resolve(
            Map.of(ConfigKey.KV_EVENTS_ENDPOINT, "localhost:5557"), Map.of(), null)).getMessage());
    assertEquals("invalid value for kv-events-encoding from flag --kv-events-encoding: 'json'"
            + " (allowed: array, map)",
        assertThrows(ConfigException.class, () -> ConfigResolver.resolve(
            Map.of(ConfigKey.KV_EVENTS_ENCODING, "json"), Map.of(), null)).getMessage());
  }

  @Test
  void aBadValueInALowerLayerIsNeverRead() throws IOException {
    // The file's value is shadowed by the environment, so it cannot fail the start.
    ServerConfig c = ConfigResolver.resolve(Map.of(), Map.of("RADIXSERVE_THREADS", "4"),
        file("threads: lots\n"));
    assertEquals(4, c.threads());
  }

  @Test
  void malformedFilesAreRejected() throws IOException {
    Path nested = file("port:\n  value: 1\n");
    assertEquals("invalid value for port in config file " + nested
            + ": a OBJECT (allowed: a single value)",
        assertThrows(ConfigException.class, () -> ConfigResolver.resolve(Map.of(), Map.of(), nested))
            .getMessage());
    Path dup = file("port: 1\nport: 2\n");
    assertEquals(true, assertThrows(ConfigException.class,
        () -> ConfigResolver.resolve(Map.of(), Map.of(), dup)).getMessage()
        .startsWith("config file " + dup + " is not valid YAML: Duplicate field 'port'"));
    Path list = file("- port\n");
    assertEquals("config file " + list + " must be a mapping of keys to values, not ARRAY",
        assertThrows(ConfigException.class, () -> ConfigResolver.resolve(Map.of(), Map.of(), list))
            .getMessage());
    assertEquals("config file not found: " + dir.resolve("nope.yaml"),
        assertThrows(ConfigException.class,
            () -> ConfigResolver.resolve(Map.of(), Map.of(), dir.resolve("nope.yaml"))).getMessage());
    assertEquals(ServerConfig.defaults(),
        ConfigResolver.resolve(Map.of(), Map.of(), file("# nothing set\n")));
  }

  @Test
  void unknownRadixserveEnvVarsAreReported() {
    assertEquals(java.util.Set.of("RADIXSERVE_MAX_NUM_SEQ"), ConfigResolver.unknownEnvVars(Map.of(
        "RADIXSERVE_MAX_NUM_SEQ", "1", "RADIXSERVE_PORT", "1", "RADIXSERVE_CONFIG", "x", "HOME", "/")));
  }

  @Test
  void theShippedConfigFileListsEveryKeyWithItsDefault() throws IOException {
    Path shipped = Path.of("../config/radixserve.yaml");
    assertEquals(ServerConfig.defaults(), ConfigResolver.resolve(Map.of(), Map.of(), shipped));
    String text = Files.readString(shipped);
    for (ConfigKey key : ConfigKey.values()) {
      assertEquals(true, text.contains("\n" + key.key() + ":"), "config/radixserve.yaml lacks " + key.key());
    }
  }
}
