package dev.radixserve.model;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/**
 * Gives back the pages of the weights files ({@link WeightsFile}) that serving does not read.
 * ONNX Runtime maps each initializer's external data and reads all of it while the session is
 * made. MatMulNBits packs its codes, scales and zero points into memory of its own: the codes'
 * mappings are then unmapped, but the scales' and zero points' stay, resident, though the packed
 * kernel never reads them again (the 1B shape at int4: 142 MiB; paged out, none of them came back
 * while serving).
 *
 * <p>{@code madvise(MADV_PAGEOUT)} reclaims a mapping's pages without changing what it reads: a
 * page read again faults back in from the file. A page ONNX Runtime wrote (its mappings are
 * private and writable) is anonymous, and without swap it is not reclaimed, so it keeps its
 * bytes. Linux 5.4 or later; elsewhere, or where the C library has no {@code madvise}, nothing
 * happens.
 *
 * <p>What stays mapped once the session exists is read by row (an embedding table, its scales and
 * zero points; a tied table is also the head's, which packed its own copy), so
 * {@link #readByRow} makes a read there cost its page. By default it costs far more: a fault
 * reads ahead ({@code read_ahead_kb}, 8 MiB on this project's VMs) and the page cache holds the
 * file in large folios (up to 2 MiB, mapped whole), so each token's row made up to 2 MiB
 * resident and a few hundred tokens the whole table, beside the head's packed copy (the 1B shape:
 * the 250 MiB table 95-190 MiB resident after six short requests; after this, under 1 MiB;
 * docs/benchmarks/journal/2026-11-29f-rows-by-page.md).
 */
public final class WeightPages {

  /** Linux's {@code MADV_RANDOM}: no read-ahead on this mapping's faults. */
  private static final int MADV_RANDOM = 1;
  /** Linux's {@code MADV_PAGEOUT}. */
  private static final int MADV_PAGEOUT = 21;
  /** Linux's {@code POSIX_FADV_WILLNEED}: start reading the range into the page cache. */
  private static final int POSIX_FADV_WILLNEED = 3;
  /** Linux's {@code POSIX_FADV_DONTNEED}: drop the range's clean, unmapped page-cache pages. */
  private static final int POSIX_FADV_DONTNEED = 4;
  /** {@code SYNC_FILE_RANGE_WAIT_BEFORE | WRITE | WAIT_AFTER}: the range is clean on return. */
  private static final int SYNC_FILE_RANGE_WAIT_WRITE_WAIT = 7;
  private static final int O_RDONLY_CLOEXEC = 0x80000;
  private static final Path MAPS = Path.of("/proc/self/maps");
  /** A mapping's first line in smaps (its fields follow, one per line, "Name:   value"). */
  private static final Pattern HEADER = Pattern.compile("[0-9a-f]+-[0-9a-f]+ ");
  private static final Optional<MethodHandle> MADVISE = libc("madvise",
      FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG,
          ValueLayout.JAVA_INT));
  private static final Optional<MethodHandle> OPEN = libc("open",
      FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
  private static final Optional<MethodHandle> FADVISE = libc("posix_fadvise",
      FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG,
          ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));
  private static final Optional<MethodHandle> SYNC_RANGE = libc("sync_file_range",
      FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG,
          ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));
  private static final Optional<MethodHandle> CLOSE = libc("close",
      FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
  /** The weights files sessions of this process were made over (a deleted one included). */
  private static final Set<String> FILES = ConcurrentHashMap.newKeySet();

  private WeightPages() {}

  /**
   * Records that a session maps {@code file}, now that it is made, and makes what stays mapped
   * cost only the pages read: each mapping reads no ahead, and its range leaves the page cache
   * (written back first where the file was just written: neither a page-out nor the page cache
   * drops a dirty page), so a later fault reads its one page instead of mapping a large folio the
   * load's reads or writes left there. Call it before a temporary file is deleted.
   */
  static void readByRow(Path file) {
    String path = file.toAbsolutePath().toString();
    FILES.add(path);
    List<Mapping> ranges = mappings(Set.of(path));
    if (ranges.isEmpty() || OPEN.isEmpty() || SYNC_RANGE.isEmpty() || FADVISE.isEmpty()) {
      return;
    }
    try (Arena arena = Arena.ofConfined()) {
      int fd = (int) OPEN.get().invokeExact(arena.allocateFrom(path), O_RDONLY_CLOEXEC);
      if (fd < 0) {
        return; // the page cache keeps the pages: a fault maps more than a row, nothing breaks
      }
      try {
        for (Mapping m : ranges) {
          advise(m, MADV_RANDOM);
          // failures leave pages resident: only memory is lost, so the results are not checked
          int ignored = (int) SYNC_RANGE.get().invokeExact(fd, m.offset(), m.length(),
              SYNC_FILE_RANGE_WAIT_WRITE_WAIT);
          advise(m, MADV_PAGEOUT); // this process's pages of the range
          ignored = (int) FADVISE.get().invokeExact(fd, m.offset(), m.length(),
              POSIX_FADV_DONTNEED); // the page cache's others
        }
      } finally {
        int ignored = (int) CLOSE.get().invokeExact(fd);
      }
    } catch (Throwable t) {
      throw new IllegalStateException("cannot advise the weights file " + path, t);
    }
  }

  /**
   * A read-only descriptor of {@code file} for {@link #willNeed}, or -1 where there is none
   * (another OS, no C library entry, or the open failed).
   */
  static int openForReads(Path file) {
    if (OPEN.isEmpty() || FADVISE.isEmpty() || CLOSE.isEmpty()) {
      return -1;
    }
    try (Arena arena = Arena.ofConfined()) {
      return (int) OPEN.get().invokeExact(arena.allocateFrom(file.toAbsolutePath().toString()),
          O_RDONLY_CLOEXEC);
    } catch (Throwable t) {
      throw new IllegalStateException("cannot open " + file, t);
    }
  }

  /**
   * Asks the kernel to start reading {@code length} bytes at {@code offset} of {@code fd}'s file
   * into the page cache ({@code POSIX_FADV_WILLNEED}); returns at once. A hint: its result is not
   * checked, since a page it did not read is read by the fault that needs it.
   */
  static void willNeed(int fd, long offset, long length) {
    try {
      int ignored = (int) FADVISE.orElseThrow().invokeExact(fd, offset, length,
          POSIX_FADV_WILLNEED);
    } catch (Throwable t) {
      throw new IllegalStateException("posix_fadvise failed", t);
    }
  }

  /** Closes a descriptor from {@link #openForReads}. */
  static void closeForReads(int fd) {
    try {
      int ignored = (int) CLOSE.orElseThrow().invokeExact(fd);
    } catch (Throwable t) {
      throw new IllegalStateException("close failed", t);
    }
  }

  /**
   * While ONNX Runtime makes a session over {@code file}: pages out the file's mappings every
   * {@code periodMillis}, on a daemon thread, until closed. Why: the session reads every
   * initializer through its own mapping and pre-packs most of them into memory of its own; what
   * it read stays resident until the session is made (a tied table, all scales and zero points:
   * 380 MiB of the 1B shape's int4 load peak), though nothing reads it again. A page-out never
   * changes what memory reads (a file page read again faults back in; an anonymous page is kept,
   * or swapped at most), so it is safe on a range ONNX Runtime is reading, or has just unmapped
   * and reused.
   */
  static Pager pagedWhileLoading(Path file, long periodMillis) {
    Set<String> files = Set.of(file.toAbsolutePath().toString());
    Thread pager = Thread.ofPlatform().daemon().name("weights-pager").start(() -> {
      try {
        while (!Thread.currentThread().isInterrupted()) {
          Thread.sleep(periodMillis);
          for (Mapping m : mappings(files)) {
            advise(m, MADV_PAGEOUT);
          }
        }
      } catch (InterruptedException e) {
        // closed: the load is done
      }
    });
    return new Pager(pager);
  }

  /** The thread {@link #pagedWhileLoading} started; closing it stops it. */
  static final class Pager implements AutoCloseable {
    private final Thread thread;

    private Pager(Thread thread) {
      this.thread = thread;
    }

    @Override
    public void close() {
      thread.interrupt();
      try {
        thread.join();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** One mapping of a weights file: its address range in this process and its file offset. */
  record Mapping(long start, long length, long offset) {}

  /**
   * Pages out every mapping of the weights files in this process; returns the bytes of those
   * mappings it advised (not what was resident: see {@link #residentBytes}).
   */
  public static long pageOut() {
    if (MADVISE.isEmpty()) {
      return 0;
    }
    long advised = 0;
    for (Mapping m : mappings()) {
      if (advise(m, MADV_PAGEOUT)) {
        advised += m.length();
      }
    }
    return advised;
  }

  /**
   * {@code madvise} on a mapping; false where the kernel refused (EINVAL before Linux 5.4 for
   * PAGEOUT): the pages stay resident, and only memory is lost.
   */
  private static boolean advise(Mapping m, int advice) {
    if (MADVISE.isEmpty()) {
      return false;
    }
    try {
      return (int) MADVISE.get().invokeExact(MemorySegment.ofAddress(m.start()), m.length(),
          advice) == 0;
    } catch (Throwable t) {
      throw new IllegalStateException("madvise failed", t);
    }
  }

  /** The weights files' mappings in this process, from {@code /proc/self/maps}. */
  static List<Mapping> mappings() {
    return mappings(FILES);
  }

  private static List<Mapping> mappings(Set<String> files) {
    List<Mapping> out = new ArrayList<>();
    if (files.isEmpty() || !Files.isReadable(MAPS)) {
      return out;
    }
    List<String> lines;
    try {
      lines = Files.readAllLines(MAPS);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    for (String line : lines) {
      // start-end perms offset dev inode path (the path may hold spaces; " (deleted)" follows
      // a file removed while mapped: a temporary weights file is, as soon as the session exists)
      String[] f = line.split("\\s+", 6);
      if (f.length < 6) {
        continue;
      }
      String path = f[5].strip();
      if (path.endsWith(" (deleted)")) {
        path = path.substring(0, path.length() - " (deleted)".length());
      }
      if (files.contains(path)) {
        int dash = f[0].indexOf('-');
        long start = Long.parseUnsignedLong(f[0].substring(0, dash), 16);
        long end = Long.parseUnsignedLong(f[0].substring(dash + 1), 16);
        out.add(new Mapping(start, end - start, Long.parseUnsignedLong(f[2], 16)));
      }
    }
    return out;
  }

  /** The resident bytes of the weights files' mappings, from {@code /proc/self/smaps}. */
  static long residentBytes() {
    return residentBytes(FILES);
  }

  /** As above, for the mappings of {@code files} (absolute paths). */
  static long residentBytes(Set<String> files) {
    Set<Long> starts = new HashSet<>();
    mappings(files).forEach(m -> starts.add(m.start()));
    long rss = 0;
    boolean ours = false;
    try {
      for (String line : Files.readAllLines(Path.of("/proc/self/smaps"))) {
        if (HEADER.matcher(line).lookingAt()) {
          ours = starts.contains(Long.parseUnsignedLong(line.substring(0, line.indexOf('-')), 16));
        } else if (ours && line.startsWith("Rss:")) {
          rss += Long.parseLong(line.substring(4).replace("kB", "").strip()) * 1024;
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return rss;
  }

  private static Optional<MethodHandle> libc(String name, FunctionDescriptor descriptor) {
    return linux()
        ? Linker.nativeLinker().defaultLookup().find(name)
            .map(f -> Linker.nativeLinker().downcallHandle(f, descriptor))
        : Optional.empty();
  }

  private static boolean linux() {
    return System.getProperty("os.name", "").toLowerCase(Locale.ROOT).contains("linux");
  }
}
