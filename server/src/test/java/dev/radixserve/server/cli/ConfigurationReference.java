package dev.radixserve.server.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Model.PositionalParamSpec;

/**
 * Renders {@code docs/configuration.md} from the command definitions themselves (picocli's
 * specs of {@code serve}, {@code check-model} and {@code bench}, and {@link ConfigKey} for the
 * environment variables and file keys), so that the reference cannot drift from {@code --help}.
 * {@link ConfigurationReferenceTest} holds the checked-in page against it; write the page with
 * {@code ./mvnw -B -ntp -pl server -am test -Dtest=ConfigurationReferenceTest
 * -Dsurefire.failIfNoSpecifiedTests=false -Dradixserve.writeDocs=true}.
 */
final class ConfigurationReference {

  static final Path PAGE = Path.of("docs", "configuration.md");

  private ConfigurationReference() {
  }

  static String render() {
    CommandLine root = Main.commandLine(Map.of(), c -> {
      throw new IllegalStateException("not started");
    }, new PrintWriter(new StringWriter()), new PrintWriter(new StringWriter()));
    StringBuilder md = new StringBuilder();
    md.append("# Configuration reference\n\n")
        .append("<!-- Generated from the command definitions (ServeCommand, CheckModelCommand, ")
        .append("BenchCommand, ConfigKey) by server/src/test/java/dev/radixserve/server/cli/")
        .append("ConfigurationReference.java; ConfigurationReferenceTest fails when this page ")
        .append("differs. Do not edit by hand. -->\n\n")
        .append("Every `serve` setting has one name: the flag `--NAME`, the environment variable ")
        .append("`RADIXSERVE_NAME` (upper snake case) and the key `NAME:` in the YAML file given by ")
        .append("`--config FILE` (or `RADIXSERVE_CONFIG`). Precedence: flag > environment variable ")
        .append("> config file > default. `config/radixserve.yaml` lists them all with their defaults; ")
        .append("`radixserve serve --print-config` prints the effective configuration. ")
        .append("Unknown keys and bad values stop the start with exit status 2 and a message naming ")
        .append("the key and the allowed values. Sizes take a suffix k, m, g (binary: 1k = 1024); ")
        .append("durations a unit ms, s, m, h.\n\n")
        .append("Exit status of every command: 0 done, 1 failed at run time (a model that does not ")
        .append("load: the message names the file, key and value), 2 bad usage or configuration.\n");
    for (String name : new String[] {"serve", "check-model", "bench"}) {
      CommandSpec spec = root.getSubcommands().get(name).getCommandSpec();
      md.append("\n## `radixserve ").append(name).append("`\n\n")
          .append(String.join(" ", spec.usageMessage().description())).append("\n\n");
      for (PositionalParamSpec p : spec.positionalParameters()) {
        md.append("Argument `").append(p.paramLabel()).append("`: ")
            .append(text(p.description())).append("\n\n");
      }
      boolean serve = name.equals("serve");
      md.append(serve ? "| flag | environment variable | default | meaning |\n|---|---|---|---|\n"
          : "| flag | default | meaning |\n|---|---|---|\n");
      for (OptionSpec o : spec.options()) {
        // the value's label outside the code span: a pipe escaped inside one shows its
        // backslash in MkDocs (Python-Markdown), though not on GitHub
        md.append("| `").append(o.longestName()).append('`');
        if (o.negatable()) {
          md.append(", `").append(negated(o)).append('`');
        }
        if (o.arity().max() > 0) {
          md.append(' ').append(cell(o.paramLabel()).replace("<", "&lt;"));
        }
        md.append(" | ");
        if (serve) {
          md.append(ConfigKey.byKey(o.longestName().substring(2))
              .map(k -> "`" + k.envVar() + "`")
              .orElse(o.longestName().equals("--config") ? "`RADIXSERVE_CONFIG`" : "—"))
              .append(" | ");
        }
        String def = o.arity().max() == 0 ? null : o.defaultValueString();
        boolean none = def == null || def.isEmpty() || def.equals("null") || def.equals("[]");
        md.append(none ? "—" : "`" + cell(def) + "`").append(" | ")
            .append(cell(text(o.description())).replace("<", "&lt;")).append(" |\n");
      }
    }
    return md.toString();
  }

  /** {@code --no-reset-cache} for a negatable {@code --reset-cache}. */
  static String negated(OptionSpec o) {
    return "--no-" + o.longestName().substring(2);
  }

  /** A description without the "Env RADIXSERVE_X." it repeats from the table's own column. */
  private static String text(String[] lines) {
    return String.join(" ", lines).replaceAll("\\s*Env RADIXSERVE_[A-Z0-9_]+\\.?", "").strip();
  }

  private static String cell(String s) {
    return s.replace("|", "\\|");
  }

  /** Writes the page, relative to the repository root given (default: the parent directory). */
  public static void main(String[] args) throws IOException {
    Path root = Path.of(args.length > 0 ? args[0] : "..");
    Files.writeString(root.resolve(PAGE), render(), StandardCharsets.UTF_8);
  }
}
