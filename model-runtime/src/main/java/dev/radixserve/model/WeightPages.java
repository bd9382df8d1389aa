package dev.radixserve.model;

import java.io.IOException;
import java.io.UncheckedIOException;
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
 * kernel never reads them again (the 1B shape at int4: 142 MiB; paged out after the warm-up,
 * none of them came back while serving).
 *
 * <p>{@code madvise(MADV_PAGEOUT)} reclaims a mapping's pages without changing what it reads:
 * a page read again faults back in from the file (an embedding table's rows do, as tokens touch
 * them, in the page cache's folios of up to a few hundred KiB). A page ONNX Runtime wrote (its
 * mappings are private and writable) is anonymous, and without swap it is not reclaimed, so it
 * keeps its bytes. Linux 5.4 or later; elsewhere, or where the C library has no {@code madvise},
 * nothing happens.
 */
public final class WeightPages {

  /** Linux's {@code MADV_PAGEOUT}. */
  private static final int MADV_PAGEOUT = 21;
  private static final Path MAPS = Path.of("/proc/self/maps");
  /** A mapping's first line in smaps (its fields follow, one per line, "Name:   value"). */
  private static final Pattern HEADER = Pattern.compile("[0-9a-f]+-[0-9a-f]+ ");
  private static final Optional<MethodHandle> MADVISE = linux()
      ? Linker.nativeLinker().defaultLookup().find("madvise")
          .map(f -> Linker.nativeLinker().downcallHandle(f, FunctionDescriptor.of(
              ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG,
              ValueLayout.JAVA_INT)))
      : Optional.empty();
  /** The weights files sessions of this process were made over (a deleted one included). */
  private static final Set<String> FILES = ConcurrentHashMap.newKeySet();

  private WeightPages() {}

  /** Records that a session maps {@code file}. */
  static void mapped(Path file) {
    FILES.add(file.toAbsolutePath().toString());
  }

  /** One mapping of a weights file: its address range in this process. */
  record Mapping(long start, long length) {}

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
      try {
        // a failure (EINVAL before Linux 5.4) leaves the pages resident: only memory is lost
        if ((int) MADVISE.get().invokeExact(MemorySegment.ofAddress(m.start()), m.length(),
            MADV_PAGEOUT) == 0) {
          advised += m.length();
        }
      } catch (Throwable t) {
        throw new IllegalStateException("madvise failed", t);
      }
    }
    return advised;
  }

  /** The weights files' mappings in this process, from {@code /proc/self/maps}. */
  static List<Mapping> mappings() {
    List<Mapping> out = new ArrayList<>();
    if (FILES.isEmpty() || !Files.isReadable(MAPS)) {
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
      if (FILES.contains(path)) {
        int dash = f[0].indexOf('-');
        long start = Long.parseUnsignedLong(f[0].substring(0, dash), 16);
        long end = Long.parseUnsignedLong(f[0].substring(dash + 1), 16);
        out.add(new Mapping(start, end - start));
      }
    }
    return out;
  }

  /** The resident bytes of the weights files' mappings, from {@code /proc/self/smaps}. */
  static long residentBytes() {
    Set<Long> starts = new HashSet<>();
    mappings().forEach(m -> starts.add(m.start()));
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

  private static boolean linux() {
    return System.getProperty("os.name", "").toLowerCase(Locale.ROOT).contains("linux");
  }
}
