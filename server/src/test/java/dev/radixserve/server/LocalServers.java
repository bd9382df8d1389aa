package dev.radixserve.server;

import dev.radixserve.server.config.ServerConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Test servers: loopback, a free port, one ONNX Runtime thread, a small KV pool. */
public final class LocalServers {

  private LocalServers() {}

  /** A builder the caller may adjust further before {@code RadixServer.start(b.build())}. */
  public static ServerConfig.Builder builder(int numBlocks) {
    ServerConfig.Builder b = ServerConfig.builder();
    b.host = "127.0.0.1";
    b.port = 0;
    b.numBlocks = numBlocks;
    b.threads = 1;
    return b;
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
}
