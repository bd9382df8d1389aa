package dev.radixserve.server.cacheview;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.Comparator;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * Debian's headless Chromium driven over the DevTools protocol (a WebSocket from the JDK's own
 * client; no WebDriver): navigate, evaluate JavaScript, wait for a condition, take a screenshot.
 */
final class Chromium implements AutoCloseable {

  /** Set by {@code .ci/run}: the browser test must run (fail, not skip, without Chromium). */
  static final String REQUIRED_ENV = "RADIXSERVE_BROWSER_TESTS";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(60);

  private final Process process;
  private final Path profile;
  private final WebSocket socket;
  private final AtomicInteger ids = new AtomicInteger();
  private final Map<Integer, CompletableFuture<JsonNode>> pending = new ConcurrentHashMap<>();

  private Chromium(Process process, Path profile, WebSocket socket) {
    this.process = process;
    this.profile = profile;
    this.socket = socket;
  }

  /** The browser: {@code RADIXSERVE_CHROMIUM}, else chromium or chromium-browser on the PATH. */
  static Optional<Path> find() {
    String configured = System.getenv("RADIXSERVE_CHROMIUM");
    if (configured != null && !configured.isBlank()) {
      return Optional.of(Path.of(configured));
    }
    String path = System.getenv().getOrDefault("PATH", "/usr/bin:/bin");
    for (String dir : path.split(":")) {
      for (String name : new String[] {"chromium", "chromium-browser"}) {
        Path p = Path.of(dir, name);
        if (Files.isExecutable(p)) {
          return Optional.of(p);
        }
      }
    }
    return Optional.empty();
  }

  static Chromium launch(Path executable, int width, int height, Path log) throws Exception {
    Path profile = Files.createTempDirectory("radixserve-chromium-");
    // --no-zygote: renderers are started directly, not forked by a zygote process. A CI run on
    // 2026-11-25 lost its page at start ("Failed to send GetTerminationStatus message to
    // zygote", then every command "Not attached to an active page"); without a sandbox the
    // zygote buys nothing. --disable-dev-shm-usage: a container's small /dev/shm crashes
    // renderers (Puppeteer's advice for containers).
    Process p = new ProcessBuilder(executable.toString(), "--headless", "--no-sandbox",
        "--no-zygote", "--disable-dev-shm-usage",
        "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--disable-extensions",
        "--remote-allow-origins=*", "--remote-debugging-port=0", "--user-data-dir=" + profile,
        "--window-size=" + width + "," + height, "about:blank")
        .redirectErrorStream(true).redirectOutput(log.toFile()).start();
    try {
      Path portFile = profile.resolve("DevToolsActivePort");
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (!Files.exists(portFile) || Files.readAllLines(portFile).size() < 2) {
        if (!p.isAlive() || System.nanoTime() > deadline) {
          throw new IllegalStateException("Chromium did not open its DevTools port (exit "
              + (p.isAlive() ? "none" : p.exitValue()) + "); see " + log);
        }
        Thread.sleep(100);
      }
      int port = Integer.parseInt(Files.readAllLines(portFile).getFirst().trim());
      HttpClient http = HttpClient.newHttpClient();
      JsonNode targets = JSON.readTree(http.send(HttpRequest.newBuilder(
          URI.create("http://127.0.0.1:" + port + "/json/list")).build(),
          HttpResponse.BodyHandlers.ofString()).body());
      String ws = null;
      for (JsonNode t : targets) {
        if ("page".equals(t.path("type").asText())) {
          ws = t.get("webSocketDebuggerUrl").asText();
          break;
        }
      }
      if (ws == null) {
        throw new IllegalStateException("no page target in " + targets);
      }
      Chromium[] self = new Chromium[1];
      WebSocket socket = http.newWebSocketBuilder().buildAsync(URI.create(ws),
          new WebSocket.Listener() {
            private final StringBuilder message = new StringBuilder();

            @Override
            public CompletionStage<?> onText(WebSocket w, CharSequence data, boolean last) {
              message.append(data);
              if (last) {
                self[0].received(message.toString());
                message.setLength(0);
              }
              w.request(1);
              return null;
            }
          }).get(30, TimeUnit.SECONDS);
      self[0] = new Chromium(p, profile, socket);
      self[0].command("Emulation.setDeviceMetricsOverride", Map.of("width", width, "height",
          height, "deviceScaleFactor", 1, "mobile", false));
      return self[0];
    } catch (Exception e) {
      p.destroyForcibly();
      deleteTree(profile);
      throw e;
    }
  }

  private void received(String text) {
    try {
      JsonNode m = JSON.readTree(text);
      if (m.has("id")) {
        CompletableFuture<JsonNode> f = pending.remove(m.get("id").asInt());
        if (f != null) {
          if (m.has("error")) {
            f.completeExceptionally(new IllegalStateException("DevTools: " + m.get("error")));
          } else {
            f.complete(m.get("result"));
          }
        }
      }
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  JsonNode command(String method, Map<String, Object> params) throws Exception {
    int id = ids.incrementAndGet();
    CompletableFuture<JsonNode> f = new CompletableFuture<>();
    pending.put(id, f);
    ObjectNode m = JSON.createObjectNode();
    m.put("id", id);
    m.put("method", method);
    m.set("params", JSON.valueToTree(params));
    socket.sendText(m.toString(), true).get(30, TimeUnit.SECONDS);
    return f.get(COMMAND_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
  }

  void navigate(String url) throws Exception {
    command("Page.navigate", Map.of("url", url));
    waitFor("document.readyState === 'complete' && location.href === " + JSON.writeValueAsString(
        url), Duration.ofSeconds(30), () -> "page " + url + " did not load");
  }

  /** Evaluates {@code expression} in the page (promises awaited) and returns its JSON value. */
  JsonNode eval(String expression) throws Exception {
    JsonNode r = command("Runtime.evaluate", Map.of("expression", expression,
        "returnByValue", true, "awaitPromise", true));
    if (r.has("exceptionDetails")) {
      throw new IllegalStateException("page threw: " + r.get("exceptionDetails"));
    }
    return r.path("result").path("value");
  }

  /** {@link #eval} as text, for failure messages: never throws. */
  String evalText(String expression) {
    try {
      return eval(expression).asText();
    } catch (Exception e) {
      return "(" + e + ")";
    }
  }

  /**
   * Polls {@code condition} (a JavaScript boolean expression) every 100 ms until it holds.
   *
   * @throws AssertionError with {@code describe}'s text when it does not within {@code timeout}
   */
  void waitFor(String condition, Duration timeout, Supplier<String> describe) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      JsonNode v = eval("!!(" + condition + ")");
      if (v.asBoolean()) {
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError(describe.get() + " (waited " + timeout.toSeconds()
            + " s for: " + condition + ")");
      }
      Thread.sleep(100);
    }
  }

  /** What a browser test runs: may throw anything. */
  @FunctionalInterface
  interface Steps {
    void run() throws Exception;
  }

  /**
   * Runs {@code steps}, then takes a screenshot whether they passed or not. A screenshot that
   * fails after failed steps is added to their exception as suppressed, so it cannot hide the
   * first failure (it did once: a lost page made both fail, and only the screenshot was shown).
   */
  void screenshotAfter(Steps steps, Path file) throws Exception {
    try {
      steps.run();
    } catch (Exception | AssertionError e) {
      try {
        screenshot(file);
      } catch (Exception s) {
        e.addSuppressed(s);
      }
      throw e;
    }
    screenshot(file);
  }

  void screenshot(Path file) throws Exception {
    JsonNode r = command("Page.captureScreenshot", Map.of("format", "png"));
    Files.createDirectories(file.getParent());
    Files.write(file, Base64.getDecoder().decode(r.get("data").asText()));
  }

  @Override
  public void close() {
    socket.abort();
    process.descendants().forEach(ProcessHandle::destroy);
    process.destroy();
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    deleteTree(profile);
  }

  private static void deleteTree(Path dir) {
    try (Stream<Path> files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
    } catch (IOException e) {
      // a temp dir left behind is harmless
    }
  }
}
