package dev.radixserve.server;

import dev.radixserve.model.Device;
import dev.radixserve.model.graph.GraphDtype;
import dev.radixserve.server.config.ServerConfig;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Test servers: loopback, a free port, one ONNX Runtime thread, a small KV pool, on the device
 * the system properties {@value #DEVICE_PROPERTY} / {@value #DTYPE_PROPERTY} name (default: the
 * CPU in fp32). The GPU run ({@code docker/gpu-payload.sh run}) sets them to run the whole
 * end-to-end suite against {@code --device cuda}.
 */
public final class LocalServers {

  public static final String DEVICE_PROPERTY = "radixserve.test.device";
  public static final String DTYPE_PROPERTY = "radixserve.test.dtype";

  private LocalServers() {}

  /** The device the test run targets: {@code cpu} unless the GPU run says {@code cuda}. */
  public static Device.Kind testDevice() {
    return Device.Kind.valueOf(System.getProperty(DEVICE_PROPERTY, "cpu").toUpperCase());
  }

  /** A builder the caller may adjust further before {@code RadixServer.start(b.build())}. */
  public static ServerConfig.Builder builder(int numBlocks) {
    ServerConfig.Builder b = ServerConfig.builder();
    b.host = "127.0.0.1";
    b.port = 0;
    b.numBlocks = numBlocks;
    b.threads = 1;
    b.device = testDevice();
    String dtype = System.getProperty(DTYPE_PROPERTY, "");
    b.dtype = dtype.isEmpty() || dtype.equals("auto") ? null : GraphDtype.ofSetting(dtype);
    return b;
  }

  /**
   * A server for a checkpoint a test wrote to {@code dir}: 64 blocks, and prompts prefilled in
   * 16-token chunks so that a short prompt still spans several steps.
   */
  public static RadixServer startCheckpoint(Path dir, String servedModelName) {
    ServerConfig.Builder b = builder(64);
    b.model = dir;
    b.servedModelName = servedModelName;
    b.maxNumBatchedTokens = 16;
    return RadixServer.start(b.build());
  }

  /** Deletes a flat directory of model files a test wrote. */
  public static void deleteModelDir(Path dir) throws IOException {
    try (var files = Files.list(dir)) {
      for (Path f : files.toList()) {
        Files.delete(f);
      }
    }
    Files.delete(dir);
  }

  /**
   * A CPU server for the cache-tier tests: {@code numBlocks} of the test pool (16 holds one
   * ~200-token prompt at a time), no warm-up, the given graph and KV dtypes (null: the defaults),
   * prefix caching on or off, a host tier of {@code hostBytes} and a disk tier in {@code tiers}
   * (null: none).
   */
  public static RadixServer startTiered(dev.radixserve.model.graph.GraphDtype dtype,
      dev.radixserve.model.graph.KvDtype kv, boolean caching, long hostBytes, Path tiers) {
    ServerConfig.Builder b = builder(16);
    b.device = Device.Kind.CPU;
    b.dtype = dtype;
    b.kvCacheDtype = kv;
    b.prefixCaching = caching;
    b.warmup = false;
    b.kvOffloadMemoryBytes = hostBytes;
    b.kvOffloadDir = tiers;
    return RadixServer.start(b.build());
  }

  /**
   * The value of the first sample on {@code /metrics} whose line starts with {@code prefix}: a
   * bare name (then followed by a space) or a name with the start of its labels ({@code
   * name{label="v"}).
   */
  public static double metric(RadixServer s, String prefix) {
    try (HttpClient client = HttpClient.newHttpClient()) {
      String body = client.send(HttpRequest.newBuilder(
              URI.create("http://127.0.0.1:" + s.port() + "/metrics")).build(),
          HttpResponse.BodyHandlers.ofString()).body();
      return body.lines().filter(l -> l.startsWith(prefix + (prefix.contains("{") ? "" : " ")))
          .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).findFirst()
          .orElseThrow(() -> new AssertionError("no " + prefix + " in /metrics"));
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
