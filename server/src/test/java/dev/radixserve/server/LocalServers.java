package dev.radixserve.server;

import dev.radixserve.server.config.ServerConfig;

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
}
