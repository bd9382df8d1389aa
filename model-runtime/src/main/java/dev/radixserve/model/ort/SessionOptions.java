package dev.radixserve.model.ort;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** {@code OrtSessionOptions}: threads, graph optimisation, execution mode. */
public final class SessionOptions extends NativeHandle {

  /** {@code GraphOptimizationLevel} values. */
  public enum Optimization {
    DISABLE_ALL(0),
    BASIC(1),
    EXTENDED(2),
    ALL(99);

    final int code;

    Optimization(int code) {
      this.code = code;
    }
  }

  private SessionOptions(MemorySegment pointer) {
    super("OrtSessionOptions", pointer);
  }

  /**
   * System property naming a file prefix: when set, every session records ONNX Runtime's own
   * per-node profile ({@code PREFIX_<date>.json}, written when the session closes). A diagnostic
   * for benchmarks (where a step's time goes, node by node), off by default.
   */
  public static final String PROFILE_PROPERTY = "radixserve.ortProfile";

  /**
   * System property of extra session configuration entries, {@code key=value} separated by
   * {@code ;} (e.g. {@code session.disable_prepacking=1}): a diagnostic for benchmarks that
   * measure what an ONNX Runtime setting costs or saves, unset by default.
   */
  public static final String CONFIG_PROPERTY = "radixserve.ortSessionConfig";

  public static SessionOptions create() {
    SessionOptions options;
    try (Arena arena = Arena.ofConfined()) {
      options = new SessionOptions(OrtApi.get().createSessionOptions(arena.allocate(ValueLayout.ADDRESS)));
    }
    String profile = System.getProperty(PROFILE_PROPERTY);
    if (profile != null && !profile.isBlank()) {
      options.profileTo(profile);
    }
    String extra = System.getProperty(CONFIG_PROPERTY, "");
    for (String entry : extra.split(";")) {
      int eq = entry.indexOf('=');
      if (eq > 0) {
        options.config(entry.substring(0, eq).strip(), entry.substring(eq + 1).strip());
      }
    }
    return options;
  }

  /** Records ONNX Runtime's per-node profile to {@code filePrefix_<date>.json}. */
  public SessionOptions profileTo(String filePrefix) {
    try (Arena arena = Arena.ofConfined()) {
      OrtApi.get().enableProfiling(pointer(), arena.allocateFrom(filePrefix));
    }
    return this;
  }

  /** Threads inside one operator (0 = ONNX Runtime's default, one per physical core). */
  public SessionOptions intraOpThreads(int threads) {
    requireNonNegative("intra-op threads", threads);
    OrtApi.get().setIntraOpNumThreads(pointer(), threads);
    return this;
  }

  /** Threads running independent operators at once (only with parallel execution). */
  public SessionOptions interOpThreads(int threads) {
    requireNonNegative("inter-op threads", threads);
    OrtApi.get().setInterOpNumThreads(pointer(), threads);
    return this;
  }

  public SessionOptions optimization(Optimization level) {
    OrtApi.get().setGraphOptimizationLevel(pointer(), level.code);
    return this;
  }

  /** Runs operators one after another ({@code ORT_SEQUENTIAL}), the default. */
  public SessionOptions sequentialExecution() {
    OrtApi.get().setSessionExecutionMode(pointer(), 0);
    return this;
  }

  /**
   * Makes the session use {@code value} (which must outlive the session) for the graph's
   * initializer {@code name} instead of the data in the model.
   */
  public SessionOptions addInitializer(String name, OrtValue value) {
    try (Arena arena = Arena.ofConfined()) {
      OrtApi.get().addInitializer(pointer(), arena.allocateFrom(name), value.pointer());
    }
    return this;
  }

  /**
   * Supplies the data of initializers the model declares with external data: ONNX Runtime uses
   * these values instead of reading a file (the values must outlive session creation).
   */
  public SessionOptions addExternalInitializers(java.util.List<String> names,
      java.util.List<OrtValue> values) {
    if (names.size() != values.size()) {
      throw new IllegalArgumentException(names.size() + " names for " + values.size() + " values");
    }
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment nameArray = arena.allocate(ValueLayout.ADDRESS, Math.max(1, names.size()));
      MemorySegment valueArray = arena.allocate(ValueLayout.ADDRESS, Math.max(1, names.size()));
      for (int i = 0; i < names.size(); i++) {
        nameArray.setAtIndex(ValueLayout.ADDRESS, i, arena.allocateFrom(names.get(i)));
        valueArray.setAtIndex(ValueLayout.ADDRESS, i, values.get(i).pointer());
      }
      OrtApi.get().addExternalInitializers(pointer(), nameArray, valueArray, names.size());
    }
    return this;
  }

  /** Registers a domain of custom ops; the domain must outlive every session made from here. */
  public SessionOptions addCustomOpDomain(CustomOpDomain domain) {
    domain.addTo(this);
    return this;
  }

  /** A session configuration entry ({@code onnxruntime_session_options_config_keys.h}). */
  public SessionOptions config(String key, String value) {
    try (Arena arena = Arena.ofConfined()) {
      OrtApi.get().addSessionConfigEntry(pointer(), arena.allocateFrom(key),
          arena.allocateFrom(value));
    }
    return this;
  }

  private static void requireNonNegative(String what, int n) {
    if (n < 0) {
      throw new IllegalArgumentException(what + " must be >= 0, got " + n);
    }
  }

  @Override
  void release(OrtApi api, MemorySegment pointer) {
    api.releaseSessionOptions(pointer);
  }
}
