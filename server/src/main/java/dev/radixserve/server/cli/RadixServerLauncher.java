package dev.radixserve.server.cli;

import dev.radixserve.server.RadixServer;
import dev.radixserve.server.config.ServerConfig;
import java.time.Duration;

/** Starts the real server and presents it to the CLI as a {@link RunningServer}. */
final class RadixServerLauncher {
  private RadixServerLauncher() {}

  static RunningServer start(ServerConfig config) {
    RadixServer server = RadixServer.start(config);
    return new RunningServer() {
      @Override
      public int port() {
        return server.port();
      }

      @Override
      public void shutdown(Duration drainTimeout) {
        server.shutdown(drainTimeout);
      }

      @Override
      public void awaitTermination() throws InterruptedException {
        server.awaitTermination();
      }
    };
  }
}
