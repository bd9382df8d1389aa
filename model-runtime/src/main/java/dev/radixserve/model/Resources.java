package dev.radixserve.model;

import java.util.List;

/** Ownership helpers for the runners and pools: native resources opened in order, closed in reverse. */
final class Resources {

  private Resources() {}

  /** Adds {@code resource} to {@code opened} (to close it if a later step fails) and returns it. */
  static <T extends AutoCloseable> T track(List<AutoCloseable> opened, T resource) {
    opened.add(resource);
    return resource;
  }

  /**
   * Closes every resource, even when some fail. With a {@code primary} failure (closing after a
   * failed construction) the close failures are added to it as suppressed; without one, the first
   * close failure is thrown with the rest suppressed.
   */
  static void closeAll(List<AutoCloseable> resources, RuntimeException primary) {
    RuntimeException failure = primary;
    for (AutoCloseable r : resources) {
      try {
        r.close();
      } catch (Exception e) {
        if (failure == null) {
          failure = new IllegalStateException("releasing " + r + " failed", e);
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    if (primary == null && failure != null) {
      throw failure;
    }
  }
}
