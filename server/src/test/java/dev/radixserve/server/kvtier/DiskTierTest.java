package dev.radixserve.server.kvtier;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The disk tier: entries survive a reopen; torn, truncated, checksum-failing and misnamed entries
 * are skipped, counted and deleted, never read; another model's entries are skipped and kept; the
 * budget evicts least recently used files first.
 */
class DiskTierTest {

  private static final int B = 4;
  private static final long PAYLOAD = 64;
  private static final EntryFile.Format FORMAT = new EntryFile.Format(42, B, PAYLOAD);

  @TempDir
  Path dir;

  private final Arena arena = Arena.ofConfined();
  private final java.util.List<String> events =
      java.util.Collections.synchronizedList(new java.util.ArrayList<>());
  /** Records events as "medium+hash" / "medium-hash". */
  private final KvTier.Events log = new KvTier.Events() {
    @Override
    public void stored(KvTier tier, BlockKey key) {
      events.add(tier.medium() + "+" + key.hash());
    }

    @Override
    public void removed(KvTier tier, long hash) {
      events.add(tier.medium() + "-" + hash);
    }
  };

  @AfterEach
  void closeArena() {
    arena.close();
  }

  private static BlockKey key(long hash) {
    return new BlockKey(hash, hash - 1, new int[] {(int) hash, 1, 2, 3});
  }

  private MemorySegment kv(int seed) {
    MemorySegment s = arena.allocate(PAYLOAD);
    for (int i = 0; i < PAYLOAD; i++) {
      s.set(ValueLayout.JAVA_BYTE, i, (byte) (seed * 31 + i));
    }
    return s;
  }

  /** Stores blocks 1..n and closes the tier (its writes finish). */
  private void store(int n, EntryFile.Format format) {
    try (DiskTier tier = new DiskTier(dir, 1 << 20, format, log)) {
      for (int i = 1; i <= n; i++) {
        tier.put(key(i), kv(i));
      }
    }
  }

  private Path file(long hash) {
    return dir.resolve(EntryFile.fileName(hash));
  }

  private long files() throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.count();
    }
  }

  @Test
  void entriesSurviveAReopenAndReadBackExactly() {
    store(3, FORMAT);
    try (DiskTier tier = new DiskTier(dir, 1 << 20, FORMAT, log)) {
      assertEquals(3, tier.stats().entries());
      assertEquals(3 * FORMAT.fileBytes(), tier.stats().bytes());
      MemorySegment out = arena.allocate(PAYLOAD);
      assertTrue(tier.read(key(2), out));
      assertArrayEquals(kv(2).toArray(ValueLayout.JAVA_BYTE), out.toArray(ValueLayout.JAVA_BYTE));
      assertEquals(1, tier.stats().loads());
      assertEquals(0, tier.stats().corrupt());
      // same hash, other tokens (a 64-bit collision): not this block
      assertFalse(tier.holds(new BlockKey(2, 1, new int[] {9, 9, 9, 9})));
      assertFalse(tier.read(new BlockKey(2, 1, new int[] {9, 9, 9, 9}), out));
    }
  }

  @Test
  void truncatedTornAndMisnamedEntriesAreSkippedCountedAndDeleted() throws IOException {
    store(3, FORMAT);
    try (RandomAccessFile f = new RandomAccessFile(file(1).toFile(), "rw")) {
      f.setLength(FORMAT.fileBytes() - 10); // truncated (disk full, crash)
    }
    Files.move(file(2), file(77)); // holds block 2 under block 77's name
    Files.write(dir.resolve(EntryFile.fileName(5) + ".0" + EntryFile.TEMP_SUFFIX), new byte[10]);
    try (DiskTier tier = new DiskTier(dir, 1 << 20, FORMAT, log)) {
      assertEquals(1, tier.stats().entries());
      assertEquals(3, tier.stats().corrupt());
      assertTrue(tier.holds(key(3)));
      assertFalse(tier.holds(key(1)));
      assertFalse(tier.holds(key(2)));
    }
    assertEquals(1, files());
  }

  @Test
  void aChecksumFailureIsFoundOnLoadAndTheEntryDropped() throws IOException {
    store(2, FORMAT);
    try (RandomAccessFile f = new RandomAccessFile(file(1).toFile(), "rw")) {
      long at = FORMAT.headerBytes() + 5; // one payload byte: same length, header intact
      f.seek(at);
      int b = f.read();
      f.seek(at);
      f.write(b ^ 0x10);
    }
    try (DiskTier tier = new DiskTier(dir, 1 << 20, FORMAT, log)) {
      assertTrue(tier.holds(key(1)));
      MemorySegment out = arena.allocate(PAYLOAD);
      assertFalse(tier.read(key(1), out));
      assertEquals(1, tier.stats().corrupt());
      assertEquals(0, tier.stats().loads());
      assertFalse(tier.holds(key(1)));
      assertFalse(Files.exists(file(1)));
      assertTrue(tier.read(key(2), out));
    }
  }

  @Test
  void anotherModelsEntriesAreSkippedAndKept() throws IOException {
    store(2, new EntryFile.Format(7, B, PAYLOAD)); // another fingerprint
    try (DiskTier tier = new DiskTier(dir, 1 << 20, FORMAT, log)) {
      assertEquals(0, tier.stats().entries());
      assertEquals(2, tier.stats().corrupt());
      assertFalse(tier.holds(key(1)));
    }
    assertEquals(2, files());
  }

  @Test
  void theBudgetEvictsLeastRecentlyUsedFilesFirst() throws IOException {
    try (DiskTier tier = new DiskTier(dir, 2 * FORMAT.fileBytes(), FORMAT, log)) {
      tier.put(key(1), kv(1));
      tier.put(key(2), kv(2));
      awaitStores(tier, 2);
      assertTrue(tier.holds(key(1))); // 1 is now more recent than 2
      tier.put(key(3), kv(3));
      awaitStores(tier, 3);
      assertEquals(2, tier.stats().entries());
      assertEquals(1, tier.stats().evictions());
      assertFalse(tier.holds(key(2)));
      assertTrue(tier.holds(key(1)));
      assertFalse(Files.exists(file(2)));
      tier.clear();
      assertEquals(0, tier.stats().entries());
    }
    assertEquals(0, files());
    assertEquals(java.util.List.of("DISK+1", "DISK+2", "DISK+3", "DISK-2", "DISK-3", "DISK-1"),
        events);
  }

  /** The writer thread's stores (no timing: waits for a count, bounded by the test timeout). */
  private static void awaitStores(DiskTier tier, long n) {
    while (tier.stats().stores() < n && tier.stats().dropped() == 0) {
      Thread.onSpinWait();
    }
    assertEquals(n, tier.stats().stores());
  }
}
