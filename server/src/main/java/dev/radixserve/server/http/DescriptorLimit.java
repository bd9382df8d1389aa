package dev.radixserve.server.http;

import com.sun.management.UnixOperatingSystemMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.util.OptionalLong;
import java.util.logging.Logger;

/**
 * Keeps {@code --max-connections} below the process's file-descriptor limit (read at start), so
 * that connections alone can never exhaust the descriptors the model files, the engine and
 * accepting itself need.
 */
public final class DescriptorLimit {

  private static final Logger LOG = Logger.getLogger(DescriptorLimit.class.getName());

  /** Descriptors left to everything else beyond those open at start (logs, sockets, files). */
  static final int RESERVE = 64;

  private DescriptorLimit() {}

  /**
   * @return {@code maxConnections}, or less with a warning when the descriptor limit cannot hold
   *     that many connections next to what is already open and {@link #RESERVE}
   */
  public static int capConnections(int maxConnections) {
    OptionalLong limit = processLimit();
    if (limit.isEmpty()) {
      return maxConnections;
    }
    long open = openDescriptors();
    int cap = capFor(maxConnections, limit.getAsLong(), open);
    if (cap < maxConnections) {
      LOG.warning(() -> "max-connections " + maxConnections + " is over what the file-descriptor"
          + " limit allows (" + limit.getAsLong() + ", " + open + " open at start, " + RESERVE
          + " kept in reserve): using " + cap + "; raise it with ulimit -n to allow more");
    }
    return cap;
  }

  /** The cap for a limit and the descriptors already open; at least 1. */
  static int capFor(int maxConnections, long limit, long open) {
    return (int) Math.max(1, Math.min(maxConnections, limit - open - RESERVE));
  }

  private static OptionalLong processLimit() {
    OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
    if (os instanceof UnixOperatingSystemMXBean unix && unix.getMaxFileDescriptorCount() > 0) {
      return OptionalLong.of(unix.getMaxFileDescriptorCount());
    }
    return OptionalLong.empty();
  }

  private static long openDescriptors() {
    OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
    return os instanceof UnixOperatingSystemMXBean unix
        ? Math.max(0, unix.getOpenFileDescriptorCount()) : 0;
  }
}
