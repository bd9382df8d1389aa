package dev.radixserve.model.ort;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * Appends ONNX Runtime's CUDA execution provider to session options through the C API
 * ({@code CreateCUDAProviderOptions} → {@code UpdateCUDAProviderOptions} →
 * {@code SessionOptionsAppendExecutionProvider_CUDA_V2}), after checking that everything it needs
 * is there, so that a missing piece is named instead of surfacing as an opaque loader error.
 *
 * <p>The checks, in the order a user meets them: the ONNX Runtime library has a CUDA provider
 * (the {@code -Pcuda} jar, not the CPU one) and ships its provider library; the CUDA 12
 * user-space libraries load ({@link #USER_SPACE_LIBRARIES}, from {@code LD_LIBRARY_PATH}); the
 * NVIDIA driver's {@code libcuda.so.1} loads. cuDNN is not needed: the provider runs with
 * {@code enable_cudnn=0} (the GPT graph has no convolution).
 */
public final class CudaProvider {

  public static final String PROVIDER = "CUDAExecutionProvider";
  static final String PROVIDER_LIBRARY = "libonnxruntime_providers_cuda.so";
  /**
   * CUDA 12 libraries the provider links against, as {@code docker/fetch-cuda12-libs.sh} fetches
   * them: the NEEDED entries of 1.29.0's {@value #PROVIDER_LIBRARY} besides the driver and libc
   * ({@code readelf -d}); cuRAND is linked though no kernel radixserve runs uses it.
   */
  public static final List<String> USER_SPACE_LIBRARIES =
      List.of("libcudart.so.12", "libcublas.so.12", "libcublasLt.so.12", "libcurand.so.10");
  public static final String DRIVER_LIBRARY = "libcuda.so.1";

  private CudaProvider() {}

  /** The CUDA provider's settings: which device, and whether fp32 matmuls may use TF32. */
  public record Settings(int deviceId, boolean tf32) {
    public Settings {
      if (deviceId < 0) {
        throw new IllegalArgumentException("CUDA device id must be >= 0, got " + deviceId);
      }
    }

    /** The provider options as ONNX Runtime's keys name them. */
    Map<String, String> options() {
      Map<String, String> o = new LinkedHashMap<>();
      o.put("device_id", Integer.toString(deviceId));
      o.put("use_tf32", tf32 ? "1" : "0");
      o.put("enable_cudnn", "0");
      // The KV pool is one large allocation: grow the arena by what is asked, not to a power of 2.
      o.put("arena_extend_strategy", "kSameAsRequested");
      return o;
    }
  }

  /**
   * Checks that the CUDA provider can start here and appends it to {@code options}.
   *
   * @throws IllegalStateException naming what is missing
   */
  public static void appendTo(SessionOptions options, Settings settings) {
    preflight();
    OrtApi api = OrtApi.get();
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment cuda = api.createCudaProviderOptions(arena.allocate(ValueLayout.ADDRESS));
      try {
        Map<String, String> o = settings.options();
        MemorySegment keys = arena.allocate(ValueLayout.ADDRESS, o.size());
        MemorySegment values = arena.allocate(ValueLayout.ADDRESS, o.size());
        int i = 0;
        for (Map.Entry<String, String> e : o.entrySet()) {
          keys.setAtIndex(ValueLayout.ADDRESS, i, arena.allocateFrom(e.getKey()));
          values.setAtIndex(ValueLayout.ADDRESS, i, arena.allocateFrom(e.getValue()));
          i++;
        }
        api.updateCudaProviderOptions(cuda, keys, values, o.size());
        api.appendCudaProvider(options.pointer(), cuda);
      } catch (OrtException e) {
        throw new IllegalStateException("ONNX Runtime could not start its CUDA provider with "
            + settings.options() + ": " + e.getMessage(), e);
      } finally {
        api.releaseCudaProviderOptions(cuda);
      }
    }
  }

  /** Throws {@link IllegalStateException} naming the first missing piece, if any. */
  public static void preflight() {
    Path library = OrtLibrary.get().path();
    check(OrtApi.get().availableProviders(),
        Files.isRegularFile(library.resolveSibling(PROVIDER_LIBRARY)), library.toString(),
        CudaProvider::dlopen).ifPresent(problem -> {
          throw new IllegalStateException(problem);
        });
  }

  /**
   * The first problem, in the order a user meets them, or empty when the provider can start.
   *
   * @param providers the execution providers the ONNX Runtime library offers
   * @param providerLibraryPresent whether {@value #PROVIDER_LIBRARY} lies beside it
   * @param load tries to load a shared library by name: empty when it loads, else the error
   */
  static Optional<String> check(List<String> providers, boolean providerLibraryPresent,
      String ortLibrary, Function<String, Optional<String>> load) {
    if (!providers.contains(PROVIDER)) {
      return Optional.of("--device cuda: the ONNX Runtime library " + ortLibrary
          + " has no CUDA execution provider (it offers " + providers + "); this is the CPU"
          + " build. Build the jar with -Pcuda (com.microsoft.onnxruntime:onnxruntime_gpu), use"
          + " the CUDA image (docker/Dockerfile.cuda), or set RADIXSERVE_ORT_LIBRARY to a GPU"
          + " build's libonnxruntime.so");
    }
    if (!providerLibraryPresent) {
      return Optional.of("--device cuda: " + PROVIDER_LIBRARY + " is missing beside "
          + ortLibrary + "; ONNX Runtime loads the CUDA provider from there");
    }
    List<String> missing = new ArrayList<>();
    String firstError = null;
    for (String lib : USER_SPACE_LIBRARIES) {
      Optional<String> error = load.apply(lib);
      if (error.isPresent()) {
        missing.add(lib);
        firstError = firstError == null ? error.get() : firstError;
      }
    }
    if (!missing.isEmpty()) {
      return Optional.of("--device cuda: CUDA 12 user-space libraries not found: " + missing
          + " (" + firstError + "). Put them on LD_LIBRARY_PATH, e.g. docker/fetch-cuda12-libs.sh"
          + " /opt/cuda12 && export LD_LIBRARY_PATH=/opt/cuda12:$LD_LIBRARY_PATH, or use the CUDA"
          + " image");
    }
    Optional<String> driver = load.apply(DRIVER_LIBRARY);
    if (driver.isPresent()) {
      return Optional.of("--device cuda: the NVIDIA driver library " + DRIVER_LIBRARY
          + " is not found (" + driver.get() + "): this host has no NVIDIA driver, or the"
          + " container was started without the GPU (docker run --gpus all)");
    }
    return Optional.empty();
  }

  /** Loads and unloads a library by name as the dynamic loader finds it; empty on success. */
  static Optional<String> dlopen(String name) {
    try (Arena arena = Arena.ofConfined()) {
      SymbolLookup.libraryLookup(name, arena);
      return Optional.empty();
    } catch (IllegalArgumentException e) {
      return Optional.of(e.getMessage() == null ? "cannot load " + name : e.getMessage());
    }
  }
}
