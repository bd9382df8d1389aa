package dev.radixserve.model;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.Optional;

/**
 * The C heap's free memory handed back to the system ({@code malloc_trim(0)}, glibc): after a
 * load, the weights made for ONNX Runtime and its own transient copies are freed, but glibc keeps
 * freed chunks that were not mapped on their own (most tensors: below its mmap threshold once it
 * has grown) resident in its arenas. Measured, that was most of the gap between a served model's
 * RSS and its weights (docs/benchmarks/journal/2026-11-21-to-28.md "A model costs its bytes"). A no-op where the C library has
 * no {@code malloc_trim} (musl, macOS).
 */
public final class NativeHeap {

  private static final Optional<MethodHandle> TRIM = Linker.nativeLinker().defaultLookup()
      .find("malloc_trim").map(f -> Linker.nativeLinker().downcallHandle(f,
          FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG)));

  private NativeHeap() {}

  /** Returns the C heap's free pages to the system; true when the library did release some. */
  public static boolean trim() {
    if (TRIM.isEmpty()) {
      return false;
    }
    try {
      return (int) TRIM.get().invokeExact(0L) == 1;
    } catch (Throwable t) {
      throw new IllegalStateException("malloc_trim failed", t);
    }
  }
}
