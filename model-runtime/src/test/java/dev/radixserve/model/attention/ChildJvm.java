package dev.radixserve.model.attention;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs a test class's {@code main} in a child JVM with this JVM's class path and the Vector API
 * module: for what is fixed per JVM (the JIT tier, the kernel's vector width).
 */
final class ChildJvm {

  private ChildJvm() {}

  /** The child's output line that starts with {@code prefix}, that prefix dropped. */
  static String line(Class<?> main, String prefix, String... jvmArgs)
      throws IOException, InterruptedException {
    List<String> command = new ArrayList<>();
    command.add(ProcessHandle.current().info().command().orElse("java"));
    command.addAll(List.of(jvmArgs));
    command.addAll(List.of("--add-modules=jdk.incubator.vector",
        "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
        main.getName()));
    Process child = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!child.waitFor(120, TimeUnit.SECONDS) || child.exitValue() != 0) {
      throw new AssertionError("child JVM failed: " + out);
    }
    return out.lines().filter(l -> l.startsWith(prefix)).findFirst()
        .orElseThrow(() -> new AssertionError("no '" + prefix + "' line in: " + out))
        .substring(prefix.length());
  }
}
