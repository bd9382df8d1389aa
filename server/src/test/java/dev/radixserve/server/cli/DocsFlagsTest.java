package dev.radixserve.server.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/**
 * Every {@code --flag} the user docs name (README.md and docs/, the dated benchmark journal
 * excepted: it records commands as they were) is a flag of some radixserve command, or is listed
 * in {@code .ci/docs-foreign-flags.txt} as another program's (Maven, Docker, curl, vLLM, llama.cpp,
 * ...). A flag renamed or dropped from {@code --help} therefore fails here wherever a page still
 * names it. (The other direction, every flag of {@code --help} documented, is
 * {@link ConfigurationReferenceTest}: the reference page is rendered from the definitions.)
 */
class DocsFlagsTest {

  private static final Path ROOT = Path.of("..");
  private static final Pattern FLAG = Pattern.compile("(?<![\\w-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)*");

  @Test
  void everyFlagTheDocsNameExists() throws IOException {
    Set<String> ours = radixserveFlags();
    Set<String> foreign = foreignFlags();
    Map<String, String> unknown = new TreeMap<>();
    Set<String> named = new TreeSet<>();
    for (Path page : pages()) {
      Matcher m = FLAG.matcher(Files.readString(page, StandardCharsets.UTF_8));
      while (m.find()) {
        named.add(m.group());
        if (!ours.contains(m.group()) && !foreign.contains(m.group())) {
          unknown.putIfAbsent(m.group(), ROOT.relativize(page).toString());
        }
      }
    }
    assertEquals(Map.of(), unknown, "flags the docs name that no radixserve command has (add a "
        + "flag used by another program to .ci/docs-foreign-flags.txt)");
    Set<String> clash = new TreeSet<>(foreign);
    clash.retainAll(ours);
    assertEquals(Set.of(), clash, ".ci/docs-foreign-flags.txt lists radixserve's own flags");
    Set<String> stale = new TreeSet<>(foreign);
    stale.removeAll(named);
    assertEquals(Set.of(), stale, ".ci/docs-foreign-flags.txt lists flags no page names any more");
    assertTrue(named.contains("--kv-cache-memory"), "the pages were not read: " + named.size());
  }

  static Set<String> radixserveFlags() {
    CommandLine root = Main.commandLine(Map.of(), c -> {
      throw new IllegalStateException("not started");
    }, new PrintWriter(new StringWriter()), new PrintWriter(new StringWriter()));
    Set<String> flags = new TreeSet<>();
    Stream.concat(Stream.of(root), root.getSubcommands().values().stream())
        .flatMap(c -> c.getCommandSpec().options().stream())
        .forEach((OptionSpec o) -> {
          for (String name : o.names()) {
            if (name.startsWith("--")) {
              flags.add(name);
            }
          }
          if (o.negatable()) {
            flags.add(ConfigurationReference.negated(o));
          }
        });
    return flags;
  }

  private static Set<String> foreignFlags() throws IOException {
    Set<String> flags = new TreeSet<>();
    for (String line : Files.readAllLines(ROOT.resolve(".ci/docs-foreign-flags.txt"))) {
      String flag = line.replaceFirst("#.*", "").strip();
      if (!flag.isEmpty()) {
        flags.add(flag);
      }
    }
    return flags;
  }

  private static Set<Path> pages() throws IOException {
    Set<Path> pages = new TreeSet<>();
    pages.add(ROOT.resolve("README.md"));
    Path journal = ROOT.resolve("docs/benchmarks/journal");
    try (Stream<Path> files = Files.walk(ROOT.resolve("docs"))) {
      files.filter(p -> p.toString().endsWith(".md") && !p.startsWith(journal)).forEach(pages::add);
    }
    return pages;
  }
}
