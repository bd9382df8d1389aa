package dev.radixserve.server.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The free memory as the machine and a container's cgroup (v2 or v1) say it. */
class AvailableMemoryTest {

  @TempDir
  Path dir;

  private Path meminfo(long availableKib) throws IOException {
    Path p = dir.resolve("meminfo");
    Files.writeString(p, "MemTotal:       24000000 kB\nMemFree:         3000000 kB\n"
        + "MemAvailable:   " + availableKib + " kB\nBuffers:           1000 kB\n");
    return p;
  }

  private Path cgroup(String... files) throws IOException {
    Path root = dir.resolve("cgroup");
    for (int i = 0; i < files.length; i += 2) {
      Path f = root.resolve(files[i]);
      Files.createDirectories(f.getParent());
      Files.writeString(f, files[i + 1]);
    }
    Files.createDirectories(root);
    return root;
  }

  @Test
  void withoutALimitTheMachinesAvailableMemory() throws IOException {
    AvailableMemory m = AvailableMemory.read(meminfo(16_000_000),
        cgroup("memory.max", "max\n", "memory.current", "123\n")).orElseThrow();
    assertEquals(16_000_000L * 1024, m.bytes());
    assertTrue(m.source().contains("MemAvailable"), m.source());
  }

  @Test
  void aCgroupV2LimitLessItsUsageNotCountingInactiveFilePages() throws IOException {
    AvailableMemory m = AvailableMemory.read(meminfo(16_000_000), cgroup(
        "memory.max", "4294967296\n", "memory.current", "3221225472\n",
        "memory.stat", "anon 1073741824\nfile 2147483648\ninactive_file 1073741824\n"))
        .orElseThrow();
    // 4 GiB limit, 3 GiB charged of which 1 GiB inactive file pages: 2 GiB free
    assertEquals(2L << 30, m.bytes());
    assertTrue(m.source().contains("memory.max"), m.source());
  }

  @Test
  void aCgroupV1Limit() throws IOException {
    AvailableMemory m = AvailableMemory.read(meminfo(16_000_000), cgroup(
        "memory/memory.limit_in_bytes", "2147483648\n",
        "memory/memory.usage_in_bytes", "1610612736\n",
        "memory/memory.stat", "cache 0\ntotal_inactive_file 536870912\n")).orElseThrow();
    assertEquals(1L << 30, m.bytes());
  }

  @Test
  void anUnlimitedV1CgroupIsNoLimit() throws IOException {
    AvailableMemory m = AvailableMemory.read(meminfo(1_000_000), cgroup(
        "memory/memory.limit_in_bytes", "9223372036854771712\n",
        "memory/memory.usage_in_bytes", "14199902208\n")).orElseThrow();
    assertEquals(1_000_000L * 1024, m.bytes());
  }

  @Test
  void theMachineWhenItHasLessThanTheCgroupAllows() throws IOException {
    AvailableMemory m = AvailableMemory.read(meminfo(1_000_000), cgroup(
        "memory.max", "8589934592\n", "memory.current", "0\n")).orElseThrow();
    assertEquals(1_000_000L * 1024, m.bytes());
  }

  @Test
  void nothingWithoutProcMeminfoOrCgroup() {
    assertTrue(AvailableMemory.read(dir.resolve("absent"), dir.resolve("none")).isEmpty());
  }
}
