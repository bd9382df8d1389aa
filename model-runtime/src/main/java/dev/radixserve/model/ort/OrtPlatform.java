package dev.radixserve.model.ort;

import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Where the {@code com.microsoft.onnxruntime} jar keeps ONNX Runtime's native library for a
 * platform: {@code ai/onnxruntime/native/<folder>/<file>}. The folder names are the artifact's
 * own (its {@code OnnxRuntime.initOsArch} spells them so); the server jar keeps the CPU
 * artifact's three Unix folders and strips Windows and the JNI binding (server/pom.xml).
 *
 * @param folder the artifact's folder, e.g. {@code linux-aarch64}
 * @param library the main library's file name there ({@code libonnxruntime.so} or {@code .dylib})
 */
record OrtPlatform(String folder, String library) {

  static final OrtPlatform LINUX_X64 = new OrtPlatform("linux-x64", "libonnxruntime.so");
  static final OrtPlatform LINUX_AARCH64 = new OrtPlatform("linux-aarch64", "libonnxruntime.so");
  static final OrtPlatform OSX_AARCH64 = new OrtPlatform("osx-aarch64", "libonnxruntime.dylib");

  /** What the server jar carries, in the order the error message lists them. */
  static final List<OrtPlatform> CARRIED = List.of(LINUX_X64, LINUX_AARCH64, OSX_AARCH64);

  static final String NATIVE_ROOT = "ai/onnxruntime/native/";

  /** The resource path of the main library. */
  String resource() {
    return NATIVE_ROOT + folder + "/" + library;
  }

  /** The resource path of a library that lies beside the main one (the GPU jar's providers). */
  String resource(String file) {
    return NATIVE_ROOT + folder + "/" + file;
  }

  /** This JVM's platform, from {@code os.name} and {@code os.arch}. */
  static Optional<OrtPlatform> current() {
    return of(System.getProperty("os.name", ""), System.getProperty("os.arch", ""));
  }

  /**
   * The platform for a JVM's {@code os.name} and {@code os.arch}; empty for one the jar has no
   * library for (an Intel Mac, Windows, 32-bit or other CPUs).
   */
  static Optional<OrtPlatform> of(String osName, String osArch) {
    String os = osName.toLowerCase(Locale.ROOT);
    String arch = osArch.toLowerCase(Locale.ROOT);
    boolean x64 = arch.equals("amd64") || arch.equals("x86_64");
    boolean arm64 = arch.equals("aarch64") || arch.equals("arm64");
    if (os.startsWith("linux")) {
      return x64 ? Optional.of(LINUX_X64) : arm64 ? Optional.of(LINUX_AARCH64) : Optional.empty();
    }
    if (os.startsWith("mac") || os.startsWith("darwin")) {
      return arm64 ? Optional.of(OSX_AARCH64) : Optional.empty();
    }
    return Optional.empty();
  }

  /** Names the platform that has no library and what to do; one line. */
  static String unsupported(String osName, String osArch) {
    return "ONNX Runtime has no native library for " + osName + " " + osArch + " in this jar"
        + " (it carries " + CARRIED.stream().map(OrtPlatform::folder).toList() + "); set -D"
        + OrtLibrary.PATH_PROPERTY + " or " + OrtLibrary.PATH_ENV
        + " to an ONNX Runtime library built for it";
  }
}
