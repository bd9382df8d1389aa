package dev.radixserve.server.cli;

import dev.radixserve.model.ForwardBatch;
import dev.radixserve.model.ModelShape;
import dev.radixserve.model.OnnxModelRunner;
import dev.radixserve.model.sampling.LogitsSampler;
import dev.radixserve.model.sampling.SampledToken;
import dev.radixserve.model.tokenizer.TokenizerLoader;
import dev.radixserve.model.weights.HfModelLoader;
import dev.radixserve.model.weights.LoadedModel;
import dev.radixserve.model.weights.ModelLoadException;
import dev.radixserve.model.weights.Tensor;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code radixserve check-model DIR}: loads a model directory exactly as {@code serve --model DIR}
 * would, runs its prompt through ONNX Runtime for one token, and prints what was loaded. Exit
 * status 0 when the model loads and runs, 1 with the load error (file, key and value) otherwise.
 */
@Command(
    name = "check-model",
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    description = "Load a Hugging Face GPT-2 directory as serve --model would, run one token, "
        + "and print the configuration, weight files, tokenizer and EOS ids it found.")
final class CheckModelCommand implements Callable<Integer> {

  @Spec
  private CommandSpec spec;

  @Parameters(paramLabel = "DIR", description = "The model directory.")
  Path dir;

  @Option(names = "--prompt", paramLabel = "TEXT", defaultValue = "Hello, my name is",
      description = "Text to run for the one-token check (default: ${DEFAULT-VALUE}).")
  String prompt;

  @Option(names = "--threads", paramLabel = "N", defaultValue = "0",
      description = "ONNX Runtime intra-op threads (0 lets it choose).")
  int threads;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    try (LoadedModel m = HfModelLoader.load(dir)) {
      describe(m, out);
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
      try (OnnxModelRunner runner = OnnxModelRunner.create(m.weights(), blockSize, blocks, threads)) {
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

  private void describe(LoadedModel m, PrintWriter out) {
    ModelShape c = m.weights().config();
    out.println("model       " + dir.toAbsolutePath().normalize());
    out.println("config      " + m.weights().describe());
    var dtypes = new TreeMap<String, Integer>();
    long params = 0;
    for (Tensor t : m.weights().tensors().values()) {
      dtypes.merge(t.dtype().name(), 1, Integer::sum);
      params += t.elementCount();
    }
    boolean sharded = Files.isRegularFile(dir.resolve(HfModelLoader.SAFETENSORS_INDEX))
        && !Files.isRegularFile(dir.resolve(HfModelLoader.SAFETENSORS));
    out.printf("weights     %s%s: %d tensors (%s), %,d parameters%n",
        m.weightFiles().stream().map(f -> f.getFileName().toString()).collect(Collectors.joining(", ")),
        sharded ? " via " + HfModelLoader.SAFETENSORS_INDEX : "", m.weights().tensors().size(),
        dtypes.entrySet().stream().map(e -> e.getValue() + " " + e.getKey()).collect(Collectors.joining(", ")),
        params);
    int padding = c.vocabSize() - m.tokenizer().vocabSize();
    out.printf("tokenizer   %s: %d tokens%s%n", TokenizerLoader.describe(dir),
        m.tokenizer().vocabSize(), padding > 0
            ? " (vocab_size pads " + padding + " more ids, never sampled)" : "");
    out.println("eos         " + m.eos().ids() + " from " + m.eos().source());
  }

  private static String quoted(String s) {
    return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n") + "\"";
  }
}
