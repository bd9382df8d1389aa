package dev.radixserve.server.memory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The memory this process may still take before the kernel kills it: the machine's {@code
 * MemAvailable} ({@code /proc/meminfo}), capped by the container's cgroup limit less what the
 * cgroup uses (cgroup v2 {@code memory.max} − {@code memory.current}, v1 {@code
 * memory.limit_in_bytes} − {@code memory.usage_in_bytes}; inactive file pages, which the kernel
 * reclaims before it kills, are not counted as used).
 *
 * @param bytes what is free to take
 * @param source where the figure comes from, for the refusal's message
 */
public record AvailableMemory(long bytes, String source) {

  /** A limit at or above this is no limit (cgroup v1 writes 2^63 rounded down to a page). */
  private static final long UNLIMITED = 1L << 60;

  /** Read from this machine's {@code /proc} and {@code /sys/fs/cgroup}. */
  public static Optional<AvailableMemory> read() {
    return read(Path.of("/proc/meminfo"), Path.of("/sys/fs/cgroup"));
  }

  /**
   * @return empty where the machine says nothing (no {@code /proc/meminfo}: not Linux)
   */
  static Optional<AvailableMemory> read(Path meminfo, Path cgroupRoot) {
    Optional<Long> machine = field(meminfo, "MemAvailable:").map(kib -> kib * 1024);
    List<AvailableMemory> found = new ArrayList<>();
    machine.ifPresent(b -> found.add(new AvailableMemory(b, "MemAvailable in " + meminfo)));
    cgroup(cgroupRoot, "memory.max", "memory.current", "inactive_file").ifPresent(found::add);
    cgroup(cgroupRoot.resolve("memory"), "memory.limit_in_bytes", "memory.usage_in_bytes",
        "total_inactive_file").ifPresent(found::add);
    return found.stream().min(java.util.Comparator.comparingLong(AvailableMemory::bytes));
  }

  private static Optional<AvailableMemory> cgroup(Path dir, String limitFile, String usageFile,
      String inactiveKey) {
    Optional<String> limitText = text(dir.resolve(limitFile));
    Optional<String> usageText = text(dir.resolve(usageFile));
    if (limitText.isEmpty() || usageText.isEmpty() || limitText.get().equals("max")) {
      return Optional.empty();
    }
    long limit = Long.parseLong(limitText.get());
    if (limit >= UNLIMITED) {
      return Optional.empty();
    }
    long inactive = field(dir.resolve("memory.stat"), inactiveKey).orElse(0L);
    long used = Math.max(0, Long.parseLong(usageText.get()) - inactive);
    return Optional.of(new AvailableMemory(Math.max(0, limit - used),
        "the cgroup's " + dir.resolve(limitFile) + " (" + limit + ") less its usage (" + used
            + ")"));
  }

  private static Optional<String> text(Path file) {
    try {
      return Optional.of(Files.readString(file).strip());
    } catch (IOException | SecurityException e) {
      return Optional.empty();
    }
  }

  /** The number after {@code key} on its line of {@code file} (whitespace-separated). */
  private static Optional<Long> field(Path file, String key) {
    try {
      for (String line : Files.readAllLines(file)) {
        String[] parts = line.strip().split("\\s+");
        if (parts.length >= 2 && parts[0].equals(key)) {
          return Optional.of(Long.parseLong(parts[1]));
        }
      }
    } catch (IOException | SecurityException | NumberFormatException e) {
      return Optional.empty();
    }
    return Optional.empty();
  }
}
