package dev.radixserve.server.cli;

import dev.radixserve.model.ForwardBatch;
import dev.radixserve.model.ModelShape;
import dev.radixserve.model.MemoryPlan;
import dev.radixserve.model.OnnxModelRunner;
import dev.radixserve.model.quant.QuantMode;
import dev.radixserve.model.graph.GraphDtype;
import dev.radixserve.model.graph.OnnxGraph;
import dev.radixserve.model.quant.CheckpointQuantization;
import dev.radixserve.model.quant.QuantSpec;
import dev.radixserve.server.RadixServer;
import dev.radixserve.server.config.ServerConfig;
import dev.radixserve.server.memory.KvBudget;
import dev.radixserve.model.quant.QuantizationException;
import dev.radixserve.model.sampling.LogitsSampler;
import dev.radixserve.model.sampling.SampledToken;
import dev.radixserve.model.tokenizer.TokenizerLoader;
import dev.radixserve.model.gguf.GgufModelLoader;
import dev.radixserve.model.weights.HfModelLoader;
import dev.radixserve.model.weights.LoadedModel;
import dev.radixserve.model.weights.ModelLoadException;
import dev.radixserve.model.weights.Tensor;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code radixserve check-model DIR}: loads a model directory exactly as {@code serve --model DIR}
 * would, runs its prompt through ONNX Runtime for one token, and prints what was loaded. With
 * {@code --quantization} (and serve's other quantization flags) the layers are quantized as the
 * server would and the check runs the quantized model. Exit status 0 when the model loads and
 * runs, 1 with the load error (file, key and value), 2 with the reason when the quantization
 * settings are invalid or this model cannot take them (as {@code serve} exits).
 */
@Command(
    name = "check-model",
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    description = "Load a model directory or GGUF file as serve --model would, run one token, "
        + "and print the configuration, weight files, tokenizer and EOS ids it found.")
final class CheckModelCommand implements Callable<Integer> {

  @Spec
  private CommandSpec spec;

  @Parameters(paramLabel = "DIR|FILE.gguf", description = "The model directory, or a GGUF file.")
  Path dir;

  @Option(names = "--prompt", paramLabel = "TEXT", defaultValue = "Hello, my name is",
      description = "Text to run for the one-token check (default: ${DEFAULT-VALUE}).")
  String prompt;

  @Option(names = "--threads", paramLabel = "N", defaultValue = "0",
      description = "ONNX Runtime intra-op threads (0 lets it choose).")
  int threads;

  @Option(names = "--quantization", paramLabel = "auto|none|int8|int4",
      description = "Quantize the linear layers as serve --quantization would (default: auto).")
  String quantization;

  @Option(names = "--quantization-block-size", paramLabel = "N|auto",
      description = "As serve's (default: auto: 64 for int8, 32 for int4).")
  String quantizationBlockSize;

  @Option(names = "--quantization-zero-points", paramLabel = "true|false|auto", arity = "0..1",
      fallbackValue = "true", description = "As serve's (default: auto).")
  String quantizationZeroPoints;

  @Option(names = "--quantization-lm-head", paramLabel = "true|false|auto", arity = "0..1",
      fallbackValue = "true", description = "As serve's (default: auto).")
  String quantizationLmHead;

  @Option(names = "--quantization-head-block-size", paramLabel = "N|auto",
      description = "As serve's (default: auto).")
  String quantizationHeadBlockSize;

  @Option(names = "--kv-cache-memory", paramLabel = "SIZE|auto",
      description = "The KV pool budget the planned footprint assumes, as serve's (default: auto,"
          + " from the free memory now).")
  String kvCacheMemory;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    ServerConfig flags = quantizationFlags();
    QuantSpec configured = flags.quantization();
    try (LoadedModel m = GgufModelLoader.isGguf(dir) ? GgufModelLoader.load(dir)
        : HfModelLoader.load(dir)) {
      describe(m, out);
      QuantSpec quant;
      try {
        // check-model runs on the CPU
        quant = QuantSpec.forModel(configured, m.weights().checkpointQuantization(),
            flags.quantizationAuto() ? m.weights().requantizeAs() : QuantMode.NONE,
            m.weights().offsetWeights(), m.weights().q8Tables(),
            QuantSpec.accuracyLevelFor(false),
            flags.quantizationHead())
            .resolvedFor(m.weights().config().hiddenSize());
        describeQuantization(m, quant, out);
        describeMemory(m, quant, flags, out);
      } catch (QuantizationException e) {
        out.flush();
        err.println("radixserve: check-model: " + e.getMessage());
        err.flush();
        return CommandLine.ExitCode.USAGE;
      }
      int[] tokens = m.tokenizer().encode(prompt);
      ModelShape c = m.weights().config();
      if (tokens.length == 0 || tokens.length > c.nPositions()) {
        err.println("radixserve: check-model: the prompt has " + tokens.length + " tokens; it needs"
            + " 1 to " + c.nPositions());
        return 1;
      }
      long start = System.nanoTime();
      int blockSize = 16;
      int blocks = (tokens.length + blockSize - 1) / blockSize;
      float[] logits;
      try (OnnxModelRunner runner =
          OnnxModelRunner.create(m.weights(), blockSize, blocks, threads, Map.of(), quant)) {
        int[] table = new int[blocks];
        Arrays.setAll(table, i -> i);
        logits = runner.forward(new ForwardBatch(List.of(new ForwardBatch.Seq(tokens, 0, table))))[0];
      }
      // as the server samples: over the tokenizer's ids only
      float[] sampleable = Arrays.copyOf(logits, m.tokenizer().vocabSize());
      int next = LogitsSampler.argmax(sampleable);
      SampledToken t = LogitsSampler.score(sampleable, next, 0);
      out.printf("run         prompt %s (%d tokens) -> next token %d %s, logprob %.4f (%d ms)%n",
          quoted(prompt), tokens.length, next, quoted(m.tokenizer().decode(new int[] {next})),
          t.logprob(), (System.nanoTime() - start) / 1_000_000);
      out.println("ok");
      out.flush();
      return 0;
    } catch (ModelLoadException e) {
      err.println("radixserve: check-model: " + e.getMessage());
      err.flush();
      return 1;
    }
  }

  /**
   * The quantization flags resolved and validated exactly as serve's (same keys, same messages; a
   * bad value is a {@link ConfigException}: exit status 2).
   */
  private ServerConfig quantizationFlags() {
    Map<ConfigKey, String> flags = new EnumMap<>(ConfigKey.class);
    putIfGiven(flags, ConfigKey.QUANTIZATION, quantization);
    putIfGiven(flags, ConfigKey.QUANTIZATION_BLOCK_SIZE, quantizationBlockSize);
    putIfGiven(flags, ConfigKey.QUANTIZATION_ZERO_POINTS, quantizationZeroPoints);
    putIfGiven(flags, ConfigKey.QUANTIZATION_LM_HEAD, quantizationLmHead);
    putIfGiven(flags, ConfigKey.QUANTIZATION_HEAD_BLOCK_SIZE, quantizationHeadBlockSize);
    putIfGiven(flags, ConfigKey.KV_CACHE_MEMORY, kvCacheMemory);
    return ConfigResolver.resolve(flags, Map.of(), null);
  }

  private static void putIfGiven(Map<ConfigKey, String> flags, ConfigKey key, String value) {
    if (value != null) {
      flags.put(key, value);
    }
  }

  /**
   * What ONNX Runtime will hold: the graph is built (no weight touched) under {@code quant} and
   * under none, so the line says how many weights are quantized and the bytes either way.
   *
   * @throws QuantizationException when this model cannot take {@code quant} (the layer and a
   *     block size that would work)
   */
  private static void describeQuantization(LoadedModel m, QuantSpec quant, PrintWriter out) {
    OnnxGraph plain = m.weights().graph().build(16, GraphDtype.FLOAT32, QuantSpec.none());
    if (!quant.quantized()) {
      out.printf("quantization none: %,d bytes of weights for ONNX Runtime%n", plain.initializerBytes());
      return;
    }
    OnnxGraph graph = m.weights().graph().build(16, GraphDtype.FLOAT32, quant);
    out.printf("quantization %s: %d linear weights as MatMulNBits, %,d bytes of weights for ONNX"
        + " Runtime (%.2fx fewer than none's %,d)%n", quant.key(), graph.quantizedWeights(),
        graph.initializerBytes(), (double) plain.initializerBytes() / graph.initializerBytes(),
        plain.initializerBytes());
    if (!quant.q8Tables().isEmpty()) {
      out.printf("lm head     %s: its own Q8_0 blocks (MatMulNBits and GatherBlockQuantized int8,"
          + " block 32, not re-rounded)%n", String.join(", ", new TreeSet<>(quant.q8Tables())));
    }
  }

  /**
   * The planned footprint on the CPU ({@link MemoryPlan}): the weights as served under each
   * quantization mode this checkpoint takes (the chosen one marked), then the chosen mode's KV
   * pool, serving total and peak while loading: what serve checks against the free memory.
   */
  private static void describeMemory(LoadedModel m, QuantSpec quant, ServerConfig flags,
      PrintWriter out) {
    int blockSize = flags.blockSize();
    for (QuantMode mode : QuantMode.values()) {
      boolean chosen = mode == quant.mode();
      try {
        QuantSpec spec = chosen ? quant : QuantSpec.forModel(QuantSpec.of(mode),
                m.weights().checkpointQuantization(), QuantMode.NONE,
                m.weights().offsetWeights(), m.weights().q8Tables(),
                QuantSpec.accuracyLevelFor(false),
                flags.quantizationHead())
            .resolvedFor(m.weights().config().hiddenSize());
        // under --kv-cache-memory auto each mode's pool is what serve would choose with it
        long budget = RadixServer.kvBudget(m.weights(), flags.withKvCacheDtypeFor(spec), spec)
            .bytes();
        MemoryPlan p = MemoryPlan.forBudget(m.weights(), blockSize, budget, spec);
        out.printf("memory      %-4s weights as served %s (%.2f bytes/parameter), serving ~%s,"
            + " peak while loading ~%s%s%n", mode.label(), MemoryPlan.mib(p.weightBytes()),
            (double) p.weightBytes() / parameters(m), MemoryPlan.mib(p.servingBytes()),
            MemoryPlan.mib(p.peakBytes()), !chosen ? ""
                : spec.offsetWeights().isEmpty() ? "  (chosen)"
                : "  (chosen; its Q4_K layers on their own codes)");
      } catch (IllegalArgumentException e) {
        out.printf("memory      %-4s not possible for this checkpoint (%s)%n", mode.label(),
            e.getMessage());
      }
    }
    ServerConfig served = flags.withKvCacheDtypeFor(quant);
    KvBudget budget = RadixServer.kvBudget(m.weights(), served, quant);
    out.println("kv budget   " + budget.reason() + "; keys and values in "
        + served.kvCacheDtype().settingName());
    MemoryPlan chosen = MemoryPlan.forBudget(m.weights(), blockSize, budget.bytes(), quant);
    out.println("plan        " + chosen.describe());
  }

  private void describe(LoadedModel m, PrintWriter out) {
    ModelShape c = m.weights().config();
    out.println("model       " + dir.toAbsolutePath().normalize());
    out.println("config      " + m.weights().describe());
    var dtypes = new TreeMap<String, Integer>();
    for (Tensor t : m.weights().tensors().values()) {
      dtypes.merge(t.decoder() == null ? t.dtype().name() : "decoded from blocks", 1,
          Integer::sum);
    }
    long params = parameters(m);
    boolean sharded = Files.isRegularFile(dir.resolve(HfModelLoader.SAFETENSORS_INDEX))
        && !Files.isRegularFile(dir.resolve(HfModelLoader.SAFETENSORS));
    out.printf("weights     %s%s: %d tensors (%s), %,d parameters%n",
        m.weightFiles().stream().map(f -> f.getFileName().toString()).collect(Collectors.joining(", ")),
        sharded ? " via " + HfModelLoader.SAFETENSORS_INDEX : "", m.weights().tensors().size(),
        dtypes.entrySet().stream().map(e -> e.getValue() + " " + e.getKey()).collect(Collectors.joining(", ")),
        params);
    int padding = c.vocabSize() - m.tokenizer().vocabSize();
    out.printf("tokenizer   %s: %d tokens%s%n", GgufModelLoader.isGguf(dir) ? "as above"
        : TokenizerLoader.describe(dir),
        m.tokenizer().vocabSize(), padding > 0
            ? " (vocab_size pads " + padding + " more ids, never sampled)" : "");
    out.println("eos         " + m.eos().ids() + " from " + m.eos().source());
  }

  /** The checkpoint's parameters (a GPTQ/AWQ layer's codes, not its scales or group indices). */
  private static long parameters(LoadedModel m) {
    long params = 0;
    CheckpointQuantization packed = m.weights().checkpointQuantization();
    for (Tensor t : m.weights().tensors().values()) {
      if (packed == null) {
        params += t.elementCount();
      } else if (t.name().endsWith(".qweight")) {
        params += t.elementCount() * packed.packFactor(); // the codes of a GPTQ/AWQ layer
      } else if (t.dtype().isFloat() && !t.name().endsWith(".scales")) {
        params += t.elementCount(); // not its scales, zero points or group indices
      }
    }
    return params;
  }

  static String quoted(String s) {
    return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n") + "\"";
  }
}
