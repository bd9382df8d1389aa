package dev.radixserve.model.ort;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;

/**
 * Locates and loads ONNX Runtime's native library once per process and resolves {@code OrtGetApiBase}.
 *
 * <p>Where the library comes from, first match wins:
 * <ol>
 *   <li>system property {@value #PATH_PROPERTY} or environment variable {@value #PATH_ENV}: a path
 *       to a {@code libonnxruntime.so} (e.g. a CUDA build; its provider libraries must lie beside it)
 *       or {@code .dylib};
 *   <li>the resource {@code ai/onnxruntime/native/<platform>/libonnxruntime.so} (or
 *       {@code .dylib}), the platform chosen by {@code os.name} and {@code os.arch}
 *       ({@link OrtPlatform}), of the
 *       {@code com.microsoft.onnxruntime} jar on the class path ({@code onnxruntime} or
 *       {@code onnxruntime_gpu}), extracted with its provider libraries into a private temporary
 *       directory.
 * </ol>
 * The library stays loaded until the process ends (ONNX Runtime does not support unloading).
 */
public final class OrtLibrary {

  static final String PATH_PROPERTY = "radixserve.ort.library";
  /** Read here, not by the server's settings: their check of RADIXSERVE_* names must know it. */
  public static final String PATH_ENV = "RADIXSERVE_ORT_LIBRARY";
  /** Shipped beside the main library in the GPU jar; loaded by ONNX Runtime itself by name. */
  private static final List<String> PROVIDER_LIBRARIES = List.of(
      "libonnxruntime_providers_shared.so",
      "libonnxruntime_providers_cuda.so",
      "libonnxruntime_providers_tensorrt.so");

  private final Path path;
  private final MemorySegment apiBase;

  private OrtLibrary(Path path, MemorySegment apiBase) {
    this.path = path;
    this.apiBase = apiBase;
  }

  /** The process-wide library; loads it on first use. */
  static OrtLibrary get() {
    return Holder.INSTANCE;
  }

  Path path() {
    return path;
  }

  /** The {@code OrtApiBase} struct: {@code { GetApi, GetVersionString }}. */
  MemorySegment apiBase() {
    return apiBase;
  }

  // Initialization-on-demand holder: loaded once, immutable afterwards.
  private static final class Holder {
    static final OrtLibrary INSTANCE = load();
  }

  private static OrtLibrary load() {
    Path path = locate();
    SymbolLookup lookup = SymbolLookup.libraryLookup(path, Arena.global());
    MemorySegment getApiBase = lookup.find("OrtGetApiBase").orElseThrow(() ->
        new IllegalStateException(path + " exports no OrtGetApiBase; is it ONNX Runtime?"));
    MethodHandle handle = Linker.nativeLinker()
        .downcallHandle(getApiBase, FunctionDescriptor.of(ValueLayout.ADDRESS));
    try {
      MemorySegment base = (MemorySegment) handle.invokeExact();
      return new OrtLibrary(path, base.reinterpret(2 * ValueLayout.ADDRESS.byteSize()));
    } catch (Throwable t) {
      throw new IllegalStateException("OrtGetApiBase failed in " + path, t);
    }
  }

  private static Path locate() {
    String override = System.getProperty(PATH_PROPERTY, System.getenv(PATH_ENV));
    if (override != null && !override.isBlank()) {
      Path p = Path.of(override);
      if (!Files.isRegularFile(p)) {
        throw new IllegalStateException(
            "ONNX Runtime library " + p + " (from " + PATH_PROPERTY + "/" + PATH_ENV + ") does not exist");
      }
      return p;
    }
    return extract();
  }

  private static Path extract() {
    String osName = System.getProperty("os.name", "");
    String osArch = System.getProperty("os.arch", "");
    OrtPlatform platform = OrtPlatform.of(osName, osArch)
        .orElseThrow(() -> new IllegalStateException(OrtPlatform.unsupported(osName, osArch)));
    ClassLoader loader = OrtLibrary.class.getClassLoader();
    try (InputStream main = loader.getResourceAsStream(platform.resource())) {
      if (main == null) {
        // the CPU jar carries every OrtPlatform; the GPU artifact (-Pcuda) only linux-x64
        throw new IllegalStateException("no " + platform.resource() + " on the class path for "
            + osName + " " + osArch + " (the -Pcuda jar carries linux-x64 only);"
            + " use the CPU jar, or set -D" + PATH_PROPERTY + " or " + PATH_ENV);
      }
      Path dir = Files.createTempDirectory("radixserve-ort-");
      dir.toFile().deleteOnExit();
      Path lib = copy(main, dir.resolve(platform.library()));
      for (String name : PROVIDER_LIBRARIES) {
        try (InputStream in = loader.getResourceAsStream(platform.resource(name))) {
          if (in != null) {
            copy(in, dir.resolve(name));
          }
        }
      }
      return lib;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot extract ONNX Runtime from the class path", e);
    }
  }

  private static Path copy(InputStream in, Path target) throws IOException {
    Files.copy(in, target, StandardCopyOption.REPLACE_EXISTING);
    target.toFile().deleteOnExit();
    return target;
  }
}
