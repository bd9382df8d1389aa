package dev.radixserve.server.cli;

import java.time.Duration;

/**
 * The started server as the CLI drives it: {@code dev.radixserve.server.RadixServer} in
 * production (adapted by {@link RadixServerLauncher}). Kept as a seam so the command line, the
 * configuration and the lifecycle compile and are tested apart from the engine.
 */
interface RunningServer {
  /** The bound port (the real one when the configuration asked for 0). */
  int port();

  /** Stops accepting requests, lets running ones finish within {@code drainTimeout}, then stops. */
  void shutdown(Duration drainTimeout);

  /** Blocks until the server has stopped. */
  void awaitTermination() throws InterruptedException;
}
