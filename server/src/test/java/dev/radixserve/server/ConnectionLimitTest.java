package dev.radixserve.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.server.RawHttp.Response;
import dev.radixserve.server.cli.Main;
import dev.radixserve.server.config.ServerConfig;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Beyond --max-connections the oldest idle connection is closed for a new one, and a new one is
 * closed at accept when every connection is busy; the limit stays below the descriptor limit.
 */
class ConnectionLimitTest {

  private static final String STREAM = "{\"model\":\"radixserve-embedded-gpt2\",\"prompt\":\"Once\","
      + "\"max_tokens\":900,\"ignore_eos\":true,\"stream\":true}";

  @Test
  void anIdleConnectionMakesRoomForANewOneAndABusyOneDoesNot() throws Exception {
    ServerConfig.Builder b = LocalServers.builder(128);
    b.maxConnections = 2;
    RadixServer server = RadixServer.start(b.build());
    int port = server.port();
    List<Socket> held = new ArrayList<>();
    try {
      for (int i = 0; i < 2; i++) {
        held.add(keepAlive(port));
      }
      // over the limit: the oldest idle connection goes, the new one is served
      Response served = RawHttp.exchange(port, RawHttp.get("/version", "Connection: close"))
          .getFirst();
      assertEquals(200, served.status(), served.text());
      assertEquals(-1, held.getFirst().getInputStream().read(), "the oldest idle one is closed");
      held.removeFirst().close();
      assertTrue(held.getFirst().isConnected());

      // two connections busy with long generations: a third is closed before it is read
      held.removeFirst().close();
      awaitOpenConnections(server, 0); // else a late close would make room for the busy ones
      List<Socket> busy = new ArrayList<>();
      for (int i = 0; i < 2; i++) {
        Socket s = new Socket("127.0.0.1", port);
        s.setSoTimeout(RawHttp.STALL_MS);
        s.getOutputStream().write(RawHttp.post("/v1/completions", STREAM));
        assertTrue(s.getInputStream().read() >= 0, "the stream started");
        busy.add(s);
      }
      held.addAll(busy);
      try (Socket refused = new Socket("127.0.0.1", port)) {
        refused.setSoTimeout(RawHttp.STALL_MS);
        assertEquals(-1, readOrReset(refused.getInputStream()), "closed at accept, unanswered");
      }
      for (Socket s : busy) {
        s.close(); // aborts both generations
      }
      held.clear();
      String metrics = server.scrapeMetrics();
      assertTrue(metrics.contains("radixserve_connections_refused_total 1.0"), metrics);
      assertTrue(metrics.contains("radixserve_connections_evicted_idle_total 1.0"), metrics);
      assertNull(server.inspect().integrityError());
    } finally {
      for (Socket s : held) {
        s.close();
      }
      server.shutdown(Duration.ofSeconds(5));
    }
  }

  /**
   * The server as its own process under a descriptor limit of 300, with the default
   * --max-connections (2048): it caps the limit below the descriptors with a warning, and after
   * 600 idle connections a good request still gets 200.
   */
  @Test
  void aFloodOfIdleConnectionsCannotExhaustASmallDescriptorLimit() throws Exception {
    Path prlimit = Path.of("/usr/bin/prlimit");
    Assumptions.assumeTrue(Files.isExecutable(prlimit), "needs util-linux prlimit");
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process p = new ProcessBuilder(prlimit.toString(), "--nofile=300:300", java,
        "--enable-native-access=ALL-UNNAMED", "-Xmx512m", "-cp",
        System.getProperty("java.class.path"), Main.class.getName(), "serve",
        "--host", "127.0.0.1", "--port", "0", "--num-blocks", "64", "--threads", "1",
        "--warmup", "false").redirectErrorStream(true).start();
    CompletableFuture.delayedExecutor(5, TimeUnit.MINUTES).execute(p::destroyForcibly);
    List<Socket> flood = new ArrayList<>();
    try {
      BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(),
          StandardCharsets.UTF_8));
      StringBuilder seen = new StringBuilder();
      int port = serving(out, seen);
      assertTrue(port > 0, "the server never said where it serves:\n" + seen);
      assertTrue(seen.toString().contains("is over what the file-descriptor limit allows"),
          seen.toString());
      CompletableFuture.runAsync(() -> out.lines().forEach(l -> { }));
      for (int i = 0; i < 600; i++) {
        flood.add(new Socket("127.0.0.1", port));
      }
      Response good = RawHttp.exchange(port, RawHttp.post("/v1/completions",
          "{\"model\":\"radixserve-embedded-gpt2\",\"prompt\":\"Once\",\"max_tokens\":4}",
          "Connection: close")).getFirst();
      assertEquals(200, good.status(), good.text());
      assertEquals(4, good.json().at("/usage/completion_tokens").asInt());
      String metrics = metricsWhenConnectable(port);
      Matcher max = Pattern.compile("(?m)^radixserve_connections_max (\\S+)$").matcher(metrics);
      assertTrue(max.find(), metrics);
      int cap = (int) Double.parseDouble(max.group(1));
      assertTrue(cap < 300 && cap >= 1, "max-connections capped below 300: " + cap);
      Matcher evicted = Pattern.compile("(?m)^radixserve_connections_evicted_idle_total (\\S+)$")
          .matcher(metrics);
      assertTrue(evicted.find() && Double.parseDouble(evicted.group(1)) >= 600 - cap,
          metrics);
    } finally {
      for (Socket s : flood) {
        s.close();
      }
      p.destroyForcibly();
      p.waitFor(30, TimeUnit.SECONDS);
    }
  }

  private static void awaitOpenConnections(RadixServer server, int open)
      throws InterruptedException {
    String line = "radixserve_connections_open " + (double) open;
    for (int attempt = 0; attempt < 500; attempt++) {
      if (server.scrapeMetrics().lines().anyMatch(line::equals)) {
        return;
      }
      Thread.sleep(10);
    }
    throw new AssertionError("still not " + line);
  }

  private static int serving(BufferedReader out, StringBuilder seen) throws IOException {
    Pattern serving = Pattern.compile("serving .* on http://[^:]+:(\\d+)");
    for (String line = out.readLine(); line != null; line = out.readLine()) {
      seen.append(line).append('\n');
      Matcher m = serving.matcher(line);
      if (m.find()) {
        return Integer.parseInt(m.group(1));
      }
    }
    return -1;
  }

  private static Socket keepAlive(int port) throws IOException {
    Socket s = new Socket("127.0.0.1", port);
    s.setSoTimeout(RawHttp.STALL_MS);
    s.getOutputStream().write(RawHttp.get("/version")); // keep-alive: stays open, then idle
    assertEquals(200, RawHttp.read(s.getInputStream()).status());
    return s;
  }

  private static int readOrReset(InputStream in) throws IOException {
    try {
      return in.read();
    } catch (SocketException reset) {
      return -1;
    }
  }

  /** /metrics over a new connection (an idle one makes room for it). */
  private static String metricsWhenConnectable(int port) {
    List<Response> r = RawHttp.exchange(port, RawHttp.get("/metrics", "Connection: close"));
    assertEquals(200, r.getFirst().status());
    return r.getFirst().text();
  }
}
