package dev.radixserve.server.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.model.ModelConfig;
import dev.radixserve.model.weights.DType;
import dev.radixserve.model.weights.GptWeights;
import dev.radixserve.model.weights.HfModelWriter;
import dev.radixserve.model.weights.RandomGpt2;
import dev.radixserve.server.config.ServerConfig;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The command line as a user meets it: exit codes, stderr messages, help, --print-config. */
class ServeCommandTest {

  @TempDir
  Path dir;

  /** Exit status, stdout and stderr of one in-process run. */
  record Run(int status, String out, String err) {}

  private static final Function<ServerConfig, RunningServer> MUST_NOT_START = config -> {
    throw new AssertionError("the server must not start in this test");
  };

  static Run run(Map<String, String> env, String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int status = Main.commandLine(env, MUST_NOT_START, new PrintWriter(out), new PrintWriter(err))
        .execute(args);
    return new Run(status, out.toString(), err.toString());
  }

  @Test
  void kvCacheMemoryTakesAutoOrASize() {
    Run auto = run(Map.of("RADIXSERVE_KV_CACHE_MEMORY", "2g"), "serve", "--print-config",
        "--kv-cache-memory", "auto");
    assertEquals(0, auto.status(), auto.err());
    assertTrue(auto.out().contains("kv-cache-memory: auto\n"), auto.out());
    Run env = run(Map.of("RADIXSERVE_KV_CACHE_MEMORY", "2g"), "serve", "--print-config");
    assertTrue(env.out().contains("kv-cache-memory: 2g\n"), env.out());
    Run bad = run(Map.of(), "serve", "--print-config", "--kv-cache-memory", "automatic");
    assertTrue(bad.status() != 0 && bad.err().contains("kv-cache-memory"), bad.err());
    // zero is no budget, not a way to say auto
    Run zero = run(Map.of(), "serve", "--print-config", "--kv-cache-memory", "0");
    assertTrue(zero.status() != 0 && zero.err().contains("kv-cache-memory"), zero.err());
  }

  @Test
  void speculativeTakesAutoNgramOrOff() {
    Run byDefault = run(Map.of(), "serve", "--print-config");
    assertTrue(byDefault.out().contains("speculative: auto\n"), byDefault.out());
    Run flag = run(Map.of("RADIXSERVE_SPECULATIVE", "off"), "serve", "--print-config",
        "--speculative", "auto");
    assertTrue(flag.out().contains("speculative: auto\n"), flag.out());
    Run env = run(Map.of("RADIXSERVE_SPECULATIVE", "ngram"), "serve", "--print-config");
    assertTrue(env.out().contains("speculative: ngram\n"), env.out());
    Run bad = run(Map.of(), "serve", "--print-config", "--speculative", "eagle");
    assertTrue(bad.status() != 0 && bad.err().contains("speculative"), bad.err());
  }

  @Test
  void benchIsTheBenchModulesCommandUnderTheServersName() {
    Run r = run(Map.of(), "bench", "--help");
    assertEquals(0, r.status(), r.err());
    assertTrue(r.out().startsWith("Usage: radixserve bench"), r.out());
    assertTrue(r.out().contains("--compare-url"), r.out());
  }

  @Test
  void printConfigShowsTheDefaultsAsYaml() {
    Run r = run(Map.of(), "serve", "--print-config");
    assertEquals(0, r.status(), r.err());
    assertEquals("""
        host: 0.0.0.0
        port: 8000
        model: null
        served-model-name: radixserve-embedded-gpt2
        block-size: 16
        kv-cache-memory: auto
        num-blocks: null
        max-num-seqs: 64
        max-num-batched-tokens: 2048
        max-model-len: null
        schedule-policy: lpm
        prefix-caching: true
        api-key: null
        max-queued-requests: 1024
        threads: 0
        max-request-body: 8m
        shutdown-timeout: 30s
        kv-events: false
        kv-events-endpoint: tcp://*:5557
        kv-events-replay-endpoint: null
        kv-events-topic: null
        kv-events-queue-size: 100000
        kv-events-encoding: array
        max-choices-per-request: 256
        max-stop-length: 256
        prefill-chunk-size: 512
        max-connections: 2048
        idle-timeout: 75s
        header-timeout: 20s
        body-timeout: 1m
        warmup: true
        device: cpu
        dtype: float32
        kv-cache-dtype: auto
        cuda-device-id: 0
        cuda-tf32: false
        fair-share: true
        max-seqs-per-request: null
        client-id-header: null
        kv-offload-memory: 0
        kv-offload-dir: null
        weights-cache: null
        kv-offload-disk-size: 16g
        kv-offload-disk-write: reused
        quantization: auto
        quantization-block-size: auto
        quantization-zero-points: auto
        quantization-lm-head: auto
        quantization-head-block-size: auto
        tool-call-parser: auto
        reasoning-parser: auto
        speculative: auto
        speculative-max-tokens: 8
        """, r.out());
  }

  @Test
  void printConfigRoundTripsThroughConfig() throws IOException {
    Path model = Files.createDirectory(dir.resolve("gpt2 model"));
    Run first = run(Map.of("RADIXSERVE_MAX_NUM_SEQS", "3", "RADIXSERVE_API_KEY", "12345"),
        "serve", "--print-config", "--port", "9001", "--model", model.toString(),
        "--schedule-policy", "fcfs", "--prefix-caching=false", "--kv-cache-memory", "1536m",
        "--shutdown-timeout", "2500ms", "--max-model-len", "512", "--served-model-name", "true");
    assertEquals(0, first.status(), first.err());
    Path file = dir.resolve("printed.yaml");
    Files.writeString(file, first.out());

    Run second = run(Map.of(), "serve", "--config", file.toString(), "--print-config");
    assertEquals(0, second.status(), second.err());
    assertEquals(first.out(), second.out());
    assertTrue(first.out().contains("port: 9001\n"), first.out());
    assertTrue(first.out().contains("max-num-seqs: 3\n"), first.out());
    assertTrue(first.out().contains("prefix-caching: false\n"), first.out());

    Run viaEnv = run(Map.of("RADIXSERVE_CONFIG", file.toString()), "serve", "--print-config");
    assertEquals(first.out(), viaEnv.out());
  }

  @Test
  void prefixCachingAloneMeansTrue() {
    Run r = run(Map.of("RADIXSERVE_PREFIX_CACHING", "false"), "serve", "--print-config",
        "--prefix-caching");
    assertTrue(r.out().contains("prefix-caching: true\n"), r.out());
  }

  @Test
  void badConfigurationExitsWithStatus2AndAMessageOnStderr() {
    Run r = run(Map.of("RADIXSERVE_SCHEDULE_POLICY", "sjf"), "serve", "--print-config");
    assertEquals(2, r.status());
    assertEquals("", r.out());
    assertEquals("radixserve: invalid value for schedule-policy from environment variable "
        + "RADIXSERVE_SCHEDULE_POLICY: 'sjf' (allowed: lpm, fcfs)\n", r.err().replace("\r\n", "\n"));

    Run range = run(Map.of(), "serve", "--block-size", "0");
    assertEquals(2, range.status());
    assertTrue(range.err().contains("invalid value for block-size: 0 (allowed: 1..1024)"), range.err());

    Run mode = run(Map.of(), "serve", "--quantization", "int3");
    assertEquals(2, mode.status());
    assertTrue(mode.err().contains("invalid value for quantization from flag --quantization: "
        + "'int3' (allowed: auto, none, int8, int4)"), mode.err());

    Run quantBlock = run(Map.of(), "serve", "--quantization", "int4",
        "--quantization-block-size", "48");
    assertEquals(2, quantBlock.status());
    assertTrue(quantBlock.err().contains("invalid value for quantization-block-size: 48 "
        + "(allowed: auto, 16, 32, 64, 128 or 256)"), quantBlock.err());

    Run unknownFlag = run(Map.of(), "serve", "--max-num-seq", "4");
    assertEquals(2, unknownFlag.status());
    assertTrue(unknownFlag.err().contains("Unknown options: '--max-num-seq', '4'"), unknownFlag.err());
  }

  @Test
  void aQuantizationTheModelCannotTakeStopsTheStartWithStatus2() {
    // n_embd 48: blocks of 32 do not divide c_attn's input width
    try (GptWeights w = RandomGpt2.create(new ModelConfig(1, 2, 48, 32, 260, 1e-5, "gelu_new"),
        4)) {
      HfModelWriter.write(w, dir, DType.F32);
    }
    HfModelWriter.writeByteLevelTokenizer(dir);
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int status = Main.commandLine(Map.of(), RadixServerLauncher::start, new PrintWriter(out),
        new PrintWriter(err)).execute("serve", "--model", dir.toString(), "--host", "127.0.0.1",
        "--port", "0", "--num-blocks", "8", "--quantization", "int8");
    assertEquals(2, status, err.toString());
    assertEquals("", out.toString());
    assertTrue(err.toString().startsWith("radixserve: cannot quantize h.0.attn.c_attn.weight: its"
        + " input dimension K = 48 is not a multiple of the quantization block size 32"),
        err.toString());
  }

  @Test
  void unknownEnvironmentVariablesAreWarnedAbout() {
    Run r = run(Map.of("RADIXSERVE_THREAD", "2"), "serve", "--print-config");
    assertEquals(0, r.status());
    assertTrue(r.err().startsWith("radixserve: warning: ignoring environment variable "
        + "RADIXSERVE_THREAD (no such setting;"), r.err());
  }

  @Test
  void theVariablesReadOutsideTheSettingsAreNotWarnedAbout() {
    // docker/run-gpu.sh sets the library's path; the warning said it was ignored while it was used
    Run r = run(Map.of("RADIXSERVE_ORT_LIBRARY", "/opt/ort/libonnxruntime.so",
        "RADIXSERVE_THREAD", "2"), "serve", "--print-config");
    assertEquals(0, r.status());
    assertFalse(r.err().contains("RADIXSERVE_ORT_LIBRARY"), r.err());
    assertTrue(r.err().contains("RADIXSERVE_THREAD (no such setting;"), r.err());
  }

  @Test
  void helpDocumentsEveryFlagItsEnvironmentVariableAndDefault() {
    Run r = run(Map.of(), "serve", "--help");
    assertEquals(0, r.status());
    for (ConfigKey key : ConfigKey.values()) {
      assertTrue(r.out().contains(key.flag() + "=") || r.out().contains(key.flag() + "[="),
          key.flag() + " missing:\n" + r.out());
      assertTrue(r.out().replaceAll("\\s+", " ").contains("Env " + key.envVar()),
          key.envVar() + " missing:\n" + r.out());
    }
    String flat = r.out().replaceAll("\\s+", " ");
    assertTrue(flat.contains("Default: 8000"), r.out());
    assertTrue(flat.contains("Default: auto"), r.out());
    assertTrue(flat.contains("Default: lpm"), r.out());
    assertTrue(flat.contains("Default: 30s"), r.out());
    assertTrue(flat.contains("Precedence: flag > environment variable > config file > default."));
  }

  @Test
  void versionNamesTheProjectVersion() {
    Run r = run(Map.of(), "--version");
    assertEquals(0, r.status());
    assertTrue(r.out().matches("(?s)radixserve \\d+\\.\\d+\\.\\d+(-SNAPSHOT)?\n.*"), r.out());
  }

  @Test
  void noCommandIsAUsageError() {
    Run r = run(Map.of());
    assertEquals(2, r.status());
    assertTrue(r.err().contains("Missing command: serve, bench or check-model"), r.err());
  }
}
