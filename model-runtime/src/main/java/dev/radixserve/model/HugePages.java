package dev.radixserve.model;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.Locale;
import java.util.Optional;

/**
 * Large zeroed buffers backed by transparent huge pages where Linux offers them.
 *
 * <p>Why: the KV pool is read in 16 KB blocks scattered over hundreds of megabytes, so with 4 KB
 * pages nearly every page of a decode step misses the TLB. Anonymous memory mapped and advised
 * {@code MADV_HUGEPAGE} before its first touch is faulted in as 2 MB pages (the kernel's
 * {@code transparent_hugepage} setting {@code madvise} or {@code always}): the kernel's streaming
 * read over the pool ran ~25% faster on this project's 2-core machine (docs/benchmarks/journal/2026-11-21-to-28.md). Elsewhere,
 * when {@code mmap} fails, or with {@code -Dradixserve.hugePages=false} (for hosts where huge
 * pages are unwanted), it falls back to {@link Arena#allocate} (same contents, 4 KB pages).
 *
 * <p>Every page is faulted in here, at allocation, as {@link Arena#allocate} does by zeroing:
 * left to the first write, a decode step that wrote a sequence's first row into a fresh part of
 * the pool faulted in a 2 MB page in each of the 2 × layers caches, and on this project's VM
 * (whose host backs guest memory lazily) such a step took 90–120 ms instead of 6 (measured:
 * two such steps per thousand in a batch-1 decode bench, each a visible stall in a stream).
 * The pool's memory is then committed at start, as vLLM's and llama.cpp's KV caches are.
 */
public final class HugePages {

  private static final long HUGE = 2L << 20;
  // Linux x86-64 and aarch64 share these values
  private static final int PROT_READ_WRITE = 0x1 | 0x2;
  private static final int MAP_PRIVATE_ANONYMOUS = 0x02 | 0x20;
  private static final int MADV_HUGEPAGE = 14;
  /** Linux 5.14+: fault every page of a range in, writable, now. */
  private static final int MADV_POPULATE_WRITE = 23;
  private static final long PAGE = 4096;

  private static final Optional<Native> NATIVE =
      Boolean.parseBoolean(System.getProperty("radixserve.hugePages", "true"))
          ? Native.load() : Optional.empty();

  private HugePages() {}

  /**
   * {@code bytes} of zeroed memory, 2 MB aligned when mapped here, released when {@code arena}
   * closes.
   */
  public static MemorySegment allocate(Arena arena, long bytes) {
    if (NATIVE.isPresent() && bytes >= HUGE) {
      MemorySegment mapped = NATIVE.get().map(arena, bytes);
      if (mapped != null) {
        return mapped;
      }
    }
    return arena.allocate(Math.max(1, bytes), 64).asSlice(0, bytes);
  }

  /** mmap/madvise/munmap of libc, looked up once. */
  private record Native(MethodHandle mmap, MethodHandle madvise, MethodHandle munmap) {

    static Optional<Native> load() {
      if (!System.getProperty("os.name", "").toLowerCase(Locale.ROOT).contains("linux")) {
        return Optional.empty();
      }
      try {
        Linker linker = Linker.nativeLinker();
        var libc = linker.defaultLookup();
        return Optional.of(new Native(
            linker.downcallHandle(libc.find("mmap").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS,
                    ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT,
                    ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG)),
            linker.downcallHandle(libc.find("madvise").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS,
                    ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT)),
            linker.downcallHandle(libc.find("munmap").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS,
                    ValueLayout.JAVA_LONG))));
      } catch (RuntimeException e) {
        return Optional.empty();
      }
    }

    /** Maps bytes + 2 MB, advises the 2 MB-aligned part; null when the kernel refuses. */
    MemorySegment map(Arena arena, long bytes) {
      long length = bytes + HUGE;
      try {
        MemorySegment base = (MemorySegment) mmap.invokeExact(MemorySegment.NULL, length,
            PROT_READ_WRITE, MAP_PRIVATE_ANONYMOUS, -1, 0L);
        if (base.address() == -1L || base.address() == 0L) {
          return null;
        }
        long aligned = (base.address() + HUGE - 1) & -HUGE;
        MemorySegment region = MemorySegment.ofAddress(aligned);
        // advice is a hint: a kernel without THP leaves 4 KB pages, which is still correct
        int ignored = (int) madvise.invokeExact(region, bytes, MADV_HUGEPAGE);
        MemorySegment mapped = region.reinterpret(bytes, arena, unused -> unmap(base, length));
        if ((int) madvise.invokeExact(region, bytes, MADV_POPULATE_WRITE) != 0) {
          // an older kernel: a write per page faults it in (a zero, as it already holds)
          for (long at = 0; at < bytes; at += PAGE) {
            mapped.set(ValueLayout.JAVA_BYTE, at, (byte) 0);
          }
        }
        return mapped;
      } catch (Throwable t) {
        return null;
      }
    }

    private void unmap(MemorySegment base, long length) {
      try {
        int ignored = (int) munmap.invokeExact(base, length);
      } catch (Throwable t) {
        throw new IllegalStateException("munmap failed", t);
      }
    }
  }
}
