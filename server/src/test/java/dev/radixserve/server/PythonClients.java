package dev.radixserve.server;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * The Python of {@code .ci/install-sdks.sh} ({@code RADIXSERVE_SDK_PYTHON}: the OpenAI SDK, and
 * the gateways' libraries prometheus_client, pyzmq and msgspec), for tests that check radixserve
 * with third-party clients. Without it such a test is skipped, unless {@code
 * RADIXSERVE_SDK_TESTS} is set (as {@code .ci/run} does): then it fails.
 */
public final class PythonClients {

  private PythonClients() {}

  /** The value of {@code env}, which {@code .ci/install-sdks.sh} sets. */
  public static String required(String env) {
    String v = System.getenv(env);
    if (v == null || v.isBlank()) {
      if (System.getenv("RADIXSERVE_SDK_TESTS") != null) {
        throw new AssertionError("RADIXSERVE_SDK_TESTS is set but " + env
            + " is not (run .ci/install-sdks.sh)");
      }
      Assumptions.abort(env + " is not set: this third-party client test is skipped"
          + " (eval \"$(bash .ci/install-sdks.sh)\"; CI runs it)");
    }
    return v;
  }

  /** The venv's interpreter. */
  public static String python() {
    return required("RADIXSERVE_SDK_PYTHON");
  }

  /** Runs {@code command} in {@code workDir}; it must exit 0 within 5 minutes. Returns stdout. */
  public static String run(List<String> command, Path workDir) throws Exception {
    Path out = Files.createTempFile("client", ".out");
    Path err = Files.createTempFile("client", ".err");
    try {
      Process p = new ProcessBuilder(command).directory(workDir.toFile())
          .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
      if (!p.waitFor(5, TimeUnit.MINUTES)) {
        p.destroyForcibly();
      }
      String stdout = Files.readString(out, StandardCharsets.UTF_8);
      assertEquals(0, p.exitValue(), String.join(" ", command) + ":\n" + stdout
          + Files.readString(err, StandardCharsets.UTF_8));
      return stdout;
    } finally {
      Files.delete(out);
      Files.delete(err);
    }
  }
}
