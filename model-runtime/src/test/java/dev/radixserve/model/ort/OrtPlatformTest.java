package dev.radixserve.model.ort;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.util.Optional;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Which of ONNX Runtime's native folders a JVM's {@code os.name} / {@code os.arch} selects. */
class OrtPlatformTest {

  @ParameterizedTest(name = "{0} {1} -> {2}")
  @CsvSource({
      // what JVMs report: OpenJDK on Linux says amd64/aarch64, on macOS "Mac OS X" and aarch64
      "Linux, amd64, linux-x64",
      "Linux, x86_64, linux-x64",
      "Linux, aarch64, linux-aarch64",
      "Linux, arm64, linux-aarch64",
      "Mac OS X, aarch64, osx-aarch64",
      "Mac OS X, arm64, osx-aarch64",
      "Darwin, aarch64, osx-aarch64"})
  void selectsTheArtifactsFolder(String os, String arch, String folder) {
    assertEquals(folder, OrtPlatform.of(os, arch).orElseThrow().folder());
  }

  @ParameterizedTest(name = "{0} {1}: none")
  @CsvSource({
      "Mac OS X, x86_64",   // Intel Macs: the 1.29 artifact has no osx-x64
      "Windows 11, amd64",  // stripped from the server jar (the FFM loader is Unix-only here)
      "Linux, arm",
      "Linux, x86",
      "Linux, riscv64",
      "Linux, ppc64le",
      "FreeBSD, amd64"})
  void hasNoneForOtherPlatforms(String os, String arch) {
    assertEquals(Optional.empty(), OrtPlatform.of(os, arch));
  }

  @Test
  void theMessageNamesThePlatformAndWhatTheJarCarries() {
    String message = OrtPlatform.unsupported("Mac OS X", "x86_64");
    assertTrue(message.contains("Mac OS X x86_64"), message);
    assertTrue(message.contains("[linux-x64, linux-aarch64, osx-aarch64]"), message);
    assertTrue(message.contains(OrtLibrary.PATH_PROPERTY), message);
  }

  @Test
  void librariesEndAsThePlatformsLoaderWantsThem() {
    assertEquals("ai/onnxruntime/native/osx-aarch64/libonnxruntime.dylib",
        OrtPlatform.OSX_AARCH64.resource());
    assertEquals("ai/onnxruntime/native/linux-aarch64/libonnxruntime.so",
        OrtPlatform.LINUX_AARCH64.resource());
  }

  /** The folder and file names are the artifact's own: each carried platform's library is there. */
  @Test
  void everyCarriedPlatformIsInTheOnnxRuntimeArtifact() throws Exception {
    for (OrtPlatform platform : OrtPlatform.CARRIED) {
      try (InputStream in = getClass().getClassLoader().getResourceAsStream(platform.resource())) {
        assertNotNull(in, platform.resource() + " is not in com.microsoft.onnxruntime's jar");
      }
    }
  }

  /** This machine (CI: linux-x64) selects a platform, and that library is what gets loaded. */
  @Test
  void thisMachineLoadsItsPlatformsLibrary() {
    OrtPlatform platform = OrtPlatform.current().orElseThrow();
    Assumptions.assumeTrue(System.getProperty(OrtLibrary.PATH_PROPERTY) == null
        && System.getenv(OrtLibrary.PATH_ENV) == null, "an ONNX Runtime library is set explicitly");
    assertEquals(platform.library(), OrtLibrary.get().path().getFileName().toString());
  }
}
