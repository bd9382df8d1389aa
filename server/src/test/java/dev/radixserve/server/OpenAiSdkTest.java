package dev.radixserve.server;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The official OpenAI SDKs against the real server: {@code chat.completions.parse} with a
 * Pydantic / zod {@code response_format}, {@code tools} with {@code tool_choice: required} and
 * parsed arguments, streamed tool-call deltas (scripts in {@code src/test/sdk}). The clients come
 * from {@code .ci/install-sdks.sh} ({@code RADIXSERVE_SDK_PYTHON}, {@code
 * RADIXSERVE_SDK_NODE_DIR}); without them the test is skipped, unless {@code
 * RADIXSERVE_SDK_TESTS} is set (as {@code .ci/run} does), then it fails.
 */
class OpenAiSdkTest {

  private static final Path SCRIPTS = Path.of("src", "test", "sdk");
  private static RadixServer server;

  @BeforeAll
  static void start() {
    server = RadixServer.start(LocalServers.builder(256).build());
  }

  @AfterAll
  static void stop() {
    server.shutdown(Duration.ofSeconds(5));
  }

  private static String required(String env) {
    String v = System.getenv(env);
    if (v == null || v.isBlank()) {
      if (System.getenv("RADIXSERVE_SDK_TESTS") != null) {
        throw new AssertionError("RADIXSERVE_SDK_TESTS is set but " + env
            + " is not (run .ci/install-sdks.sh)");
      }
      Assumptions.abort(env + " is not set: the OpenAI SDK test is skipped"
          + " (eval \"$(bash .ci/install-sdks.sh)\"; CI runs it)");
    }
    return v;
  }

  private static void run(List<String> command, Path workDir) throws Exception {
    Path log = Files.createTempFile("sdk", ".log");
    Process p = new ProcessBuilder(command).directory(workDir.toFile())
        .redirectErrorStream(true).redirectOutput(log.toFile()).start();
    if (!p.waitFor(5, TimeUnit.MINUTES)) {
      p.destroyForcibly();
    }
    String out = Files.readString(log, StandardCharsets.UTF_8);
    assertEquals(0, p.exitValue(), String.join(" ", command) + ":\n" + out);
  }

  private static String baseUrl() {
    return "http://127.0.0.1:" + server.port() + "/v1";
  }

  @Test
  void pythonSdkParsesStructuredOutputsAndToolCalls() throws Exception {
    String python = required("RADIXSERVE_SDK_PYTHON");
    run(List.of(python, SCRIPTS.resolve("structured_outputs.py").toAbsolutePath().toString(),
        baseUrl(), "radixserve-embedded-gpt2"), Path.of("."));
  }

  @Test
  void nodeSdkParsesStructuredOutputsAndToolCalls() throws Exception {
    Path dir = Path.of(required("RADIXSERVE_SDK_NODE_DIR"));
    // ESM resolves "openai" next to the script: run a copy inside the install directory
    Path script = dir.resolve("structured_outputs.mjs");
    try {
      Files.copy(SCRIPTS.resolve("structured_outputs.mjs"), script,
          java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      throw new AssertionError("cannot copy the Node script into " + dir, e);
    }
    run(List.of("node", script.toString(), baseUrl(), "radixserve-embedded-gpt2"), dir);
  }

  /**
   * A reasoning model (the R1-distill checkpoint of {@code ReasoningServingTest}): the SDK reads
   * {@code reasoning_content} as an extra field, whole and streamed.
   */
  @Test
  void pythonSdkReadsReasoningContent() throws Exception {
    String python = required("RADIXSERVE_SDK_PYTHON");
    Path dir = Path.of("..", "model-runtime", "src", "test", "resources",
        "transformers-checkpoints", "r1-distill");
    var fixture = new com.fasterxml.jackson.databind.ObjectMapper()
        .readTree(dir.resolve("reasoning.json").toFile());
    RadixServer r1 = LocalServers.startCheckpoint(dir, "r1-distill");
    try {
      run(List.of(python, SCRIPTS.resolve("reasoning.py").toAbsolutePath().toString(),
          "http://127.0.0.1:" + r1.port() + "/v1", "r1-distill",
          fixture.get("runs").get(0).toString()), Path.of("."));
    } finally {
      r1.shutdown(Duration.ofSeconds(5));
    }
  }
}
