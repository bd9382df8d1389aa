package dev.radixserve.server.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * {@code serve} as its own process: SIGTERM while a request runs lets it finish (drain), then
 * the process exits with status 0, not the JVM's 143.
 */
class ShutdownExitTest {

  private static final Pattern SERVING = Pattern.compile("serving .* on http://[^:]+:(\\d+)");

  @Test
  void sigtermDrainsTheRunningRequestThenExitsZero() throws Exception {
    String java = ProcessHandle.current().info().command().orElse("java");
    Process p = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-Xmx1g", "-cp",
        System.getProperty("java.class.path"), Main.class.getName(), "serve",
        "--host", "127.0.0.1", "--port", "0", "--num-blocks", "64", "--threads", "1")
        .redirectErrorStream(true).start();
    // a stall must fail the test, not hang the build: after 5 minutes the process is killed,
    // which ends every read below
    CompletableFuture.delayedExecutor(5, TimeUnit.MINUTES).execute(p::destroyForcibly);
    try {
      BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(),
          StandardCharsets.UTF_8));
      int port = -1;
      StringBuilder seen = new StringBuilder();
      while (port < 0) {
        String line = out.readLine();
        if (line == null) {
          break;
        }
        seen.append(line).append('\n');
        Matcher m = SERVING.matcher(line);
        if (m.find()) {
          port = Integer.parseInt(m.group(1));
        }
      }
      assertTrue(port > 0, "the server never said where it serves:\n" + seen);
      CompletableFuture<Void> drainOutput = CompletableFuture.runAsync(() -> out.lines()
          .forEach(l -> { }));
      HttpResponse<java.io.InputStream> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
              URI.create("http://127.0.0.1:" + port + "/v1/completions"))
          .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"radixserve-embedded-gpt2\","
              + "\"prompt\":\"Once\",\"max_tokens\":40,\"ignore_eos\":true,\"stream\":true}"))
          .build(), HttpResponse.BodyHandlers.ofInputStream());
      assertEquals(200, r.statusCode()); // the stream opens once the engine has the request
      p.destroy(); // SIGTERM
      String body;
      try (var in = r.body()) {
        body = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      }
      assertTrue(body.endsWith("data: [DONE]\n\n"), body);
      assertTrue(body.contains("\"finish_reason\":\"length\""), "drained, not cut: " + body);
      assertTrue(p.waitFor(120, TimeUnit.SECONDS), "the server did not exit");
      assertEquals(0, p.exitValue());
      drainOutput.get(10, TimeUnit.SECONDS);
    } finally {
      p.destroyForcibly();
    }
  }
}
