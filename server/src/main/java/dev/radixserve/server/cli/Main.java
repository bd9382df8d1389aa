package dev.radixserve.server.cli;

import dev.radixserve.bench.BenchCommand;
import dev.radixserve.model.quant.QuantizationException;
import dev.radixserve.model.weights.ModelLoadException;
import dev.radixserve.server.memory.InsufficientMemoryException;
import dev.radixserve.server.config.ServerConfig;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.function.Function;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code java -jar radixserve.jar <command>}: {@code serve} starts the server, {@code bench}
 * drives one, {@code check-model} loads a model directory and runs one token. Exit status: 0
 * done, 1 failed at run time (a model that does not load: the message names the file, key and
 * value), 2 bad usage or configuration (the message, naming the key and the allowed values, goes
 * to stderr).
 */
@Command(
    name = "radixserve",
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    description = "OpenAI-compatible LLM inference server with a radix-tree prefix cache.")
public final class Main implements Runnable {

  @Spec
  private CommandSpec spec;

  public static void main(String[] args) {
    PrintWriter out = new PrintWriter(System.out, true, StandardCharsets.UTF_8);
    PrintWriter err = new PrintWriter(System.err, true, StandardCharsets.UTF_8);
    int status = commandLine(System.getenv(), RadixServerLauncher::start, out, err).execute(args);
    System.exit(status);
  }

  /**
   * The whole command tree, with its inputs injected so tests run it in-process.
   *
   * @param env the process environment ({@code RADIXSERVE_*} settings)
   * @param launcher starts the server for {@code serve}
   */
  static CommandLine commandLine(Map<String, String> env,
      Function<ServerConfig, RunningServer> launcher, PrintWriter out, PrintWriter err) {
    CommandLine serve = new CommandLine(new ServeCommand(env, launcher))
        .setDefaultValueProvider(ServeCommand.builtInDefaults());
    CommandLine root = new CommandLine(new Main())
        .addSubcommand("serve", serve)
        .addSubcommand("bench", new BenchCommand())
        .addSubcommand("check-model", new CheckModelCommand());
    return root
        .setOut(out)
        .setErr(err)
        .setExecutionExceptionHandler((e, cmd, parsed) -> {
          if (e instanceof ConfigException) {
            cmd.getErr().println("radixserve: " + e.getMessage());
            cmd.getErr().flush();
            return CommandLine.ExitCode.USAGE;
          }
          if (e instanceof QuantizationException) {
            cmd.getErr().println("radixserve: " + e.getMessage());
            cmd.getErr().flush();
            return CommandLine.ExitCode.USAGE;
          }
          if (e instanceof InsufficientMemoryException) {
            cmd.getErr().println("radixserve: " + e.getMessage());
            cmd.getErr().flush();
            return CommandLine.ExitCode.SOFTWARE;
          }
          if (e instanceof ModelLoadException) {
            cmd.getErr().println("radixserve: " + e.getMessage());
            cmd.getErr().flush();
            return CommandLine.ExitCode.SOFTWARE;
          }
          throw e;
        });
  }

  @Override
  public void run() {
    throw new ParameterException(spec.commandLine(), "Missing command: serve, bench or check-model");
  }
}
