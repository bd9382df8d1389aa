package dev.radixserve.server.cli;

import java.util.logging.Logger;
import sun.misc.Signal;

/**
 * SIGTERM and SIGINT start the drain on a thread of their own instead of the JVM's default
 * handler. The default runs the shutdown hooks and then exits with 128 + signal (143 for
 * SIGTERM) whatever happened; here the drain completes, {@code serve} returns normally and the
 * process exits 0. Where the JVM reserves the signals ({@code -Xrs}) the shutdown hook remains.
 */
final class ShutdownSignals {

  private static final Logger LOG = Logger.getLogger(ShutdownSignals.class.getName());

  private ShutdownSignals() {}

  static void install(Runnable drain) {
    for (String name : new String[] {"TERM", "INT"}) {
      try {
        Signal.handle(new Signal(name), s -> Thread.ofPlatform().name("radixserve-signal")
            .start(drain));
      } catch (IllegalArgumentException e) {
        LOG.fine(() -> "cannot handle SIG" + name + ": " + e.getMessage());
      }
    }
  }
}
