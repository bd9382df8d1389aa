package dev.radixserve.server;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The official OpenAI SDKs against the real server: {@code chat.completions.parse} with a
 * Pydantic / zod {@code response_format}, {@code tools} with {@code tool_choice: required} and
 * parsed arguments, streamed tool-call deltas (scripts in {@code src/test/sdk}). The clients come
 * from {@code .ci/install-sdks.sh} ({@code RADIXSERVE_SDK_PYTHON}, {@code
 * RADIXSERVE_SDK_NODE_DIR}; see {@link PythonClients}).
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
    return PythonClients.required(env);
  }

  private static void run(List<String> command, Path workDir) throws Exception {
    PythonClients.run(command, workDir);
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
