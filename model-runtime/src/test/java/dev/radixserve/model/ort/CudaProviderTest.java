package dev.radixserve.model.ort;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Every way {@code --device cuda} can fail to start names what is missing. These run on the CPU
 * build (no CUDA provider, libraries or driver here), each against the real loader where it can.
 */
class CudaProviderTest {

  static final List<String> GPU_BUILD = List.of(CudaProvider.PROVIDER, "CPUExecutionProvider");

  @Test
  void theCpuJarHasNoCudaProviderAndSaysSo() {
    assertEquals(List.of("CPUExecutionProvider"), OrtApi.get().availableProviders());
    IllegalStateException e = assertThrows(IllegalStateException.class, CudaProvider::preflight);
    assertTrue(e.getMessage().contains("no CUDA execution provider"), e.getMessage());
    assertTrue(e.getMessage().contains("-Pcuda"), e.getMessage());
    assertTrue(e.getMessage().contains("CPUExecutionProvider"), e.getMessage());
  }

  @Test
  void appendingOnTheCpuBuildFailsBeforeAnyNativeCall() {
    try (SessionOptions options = SessionOptions.create()) {
      IllegalStateException e = assertThrows(IllegalStateException.class,
          () -> CudaProvider.appendTo(options, new CudaProvider.Settings(0, false)));
      assertTrue(e.getMessage().contains("onnxruntime_gpu"), e.getMessage());
    }
  }

  @Test
  void theCpuBuildRefusesCudaProviderOptionsItself() {
    // what ONNX Runtime says when the preflight is bypassed: proves the binding reaches it
    try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
      OrtException e = assertThrows(OrtException.class, () -> OrtApi.get()
          .createCudaProviderOptions(arena.allocate(java.lang.foreign.ValueLayout.ADDRESS)));
      assertTrue(e.getMessage().toLowerCase().contains("cuda"), e.getMessage());
    }
  }

  @Test
  void aMissingProviderLibraryIsNamed() {
    String problem = CudaProvider.check(GPU_BUILD, false, "/x/libonnxruntime.so",
        CudaProvider::dlopen).orElseThrow();
    assertTrue(problem.contains("libonnxruntime_providers_cuda.so"), problem);
  }

  @Test
  void missingCuda12LibrariesAreNamedWithTheRealLoadersError() {
    for (String lib : CudaProvider.USER_SPACE_LIBRARIES) {
      assertTrue(CudaProvider.dlopen(lib).isPresent(), lib + " should be absent on this CPU host");
    }
    String problem = CudaProvider.check(GPU_BUILD, true, "/x/libonnxruntime.so",
        CudaProvider::dlopen).orElseThrow();
    assertTrue(problem.contains("libcublasLt.so.12"), problem);
    assertTrue(problem.contains("libcudart.so.12"), problem);
    assertTrue(problem.contains("libcurand.so.10"), problem);
    assertTrue(problem.contains("LD_LIBRARY_PATH"), problem);
    assertTrue(problem.contains("fetch-cuda12-libs.sh"), problem);
  }

  @Test
  void onlyTheOneMissingLibraryIsNamed() {
    String problem = CudaProvider.check(GPU_BUILD, true, "/x/libonnxruntime.so",
        lib -> lib.equals("libcublasLt.so.12") ? CudaProvider.dlopen(lib) : Optional.empty())
        .orElseThrow();
    assertTrue(problem.contains("[libcublasLt.so.12]"), problem);
    assertTrue(!problem.contains("libcudart"), problem);
  }

  @Test
  void aHostWithoutTheDriverIsNamed() {
    assertTrue(CudaProvider.dlopen(CudaProvider.DRIVER_LIBRARY).isPresent(),
        "this CPU host should have no NVIDIA driver");
    Set<String> present = Set.copyOf(CudaProvider.USER_SPACE_LIBRARIES);
    String problem = CudaProvider.check(GPU_BUILD, true, "/x/libonnxruntime.so",
        lib -> present.contains(lib) ? Optional.empty() : CudaProvider.dlopen(lib))
        .orElseThrow();
    assertTrue(problem.contains("libcuda.so.1"), problem);
    assertTrue(problem.contains("driver"), problem);
  }

  @Test
  void aLibraryThatLoadsIsNoProblem() {
    assertEquals(Optional.empty(), CudaProvider.dlopen("libc.so.6"));
  }

  @Test
  void providerOptionsDisableCudnnAndCarryTf32() {
    assertEquals("0", new CudaProvider.Settings(1, false).options().get("use_tf32"));
    assertEquals("1", new CudaProvider.Settings(1, true).options().get("use_tf32"));
    assertEquals("0", new CudaProvider.Settings(1, true).options().get("enable_cudnn"));
    assertEquals("1", new CudaProvider.Settings(1, true).options().get("device_id"));
  }
}
