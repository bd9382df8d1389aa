package dev.radixserve.model;

import java.nio.file.Path;
import java.util.Objects;

/**
 * Where the weights file that ONNX Runtime maps ({@link WeightsFile}) is written, and whether it
 * is kept: a temporary file deleted as soon as the session exists, or a cache entry kept across
 * restarts so that the next start maps it without quantizing again.
 *
 * @param dir the directory the file goes in
 * @param checkpointKey null for a temporary file; else what identifies the checkpoint's weights
 *     (its digest and files), which with the graph names the cache entry
 */
public record WeightStore(Path dir, String checkpointKey) {

  /** System property: the directory a temporary weights file goes in (default java.io.tmpdir). */
  public static final String DIRECTORY_PROPERTY = "radixserve.weightsDir";

  public WeightStore {
    Objects.requireNonNull(dir, "dir");
  }

  /** A temporary file under {@value #DIRECTORY_PROPERTY}, else the JVM's temporary folder. */
  public static WeightStore temporary() {
    return new WeightStore(Path.of(System.getProperty(DIRECTORY_PROPERTY,
        System.getProperty("java.io.tmpdir"))), null);
  }

  /** A cache in {@code dir}, its entries named by {@code checkpointKey} and the graph. */
  public static WeightStore cache(Path dir, String checkpointKey) {
    return new WeightStore(dir, Objects.requireNonNull(checkpointKey, "checkpointKey"));
  }

  public boolean cached() {
    return checkpointKey != null;
  }
}
