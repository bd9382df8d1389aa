package dev.radixserve.model.weights;

import java.nio.file.Path;

/**
 * A model directory that cannot be loaded: the message names the file and the problem
 * ("model.safetensors: tensor h.0.attn.c_attn.weight has dtype I8, expected F32, F16 or BF16").
 */
public final class ModelLoadException extends RuntimeException {

  private final Path file;

  public ModelLoadException(Path file, String problem) {
    super(file.getFileName() + ": " + problem + " (" + file + ")");
    this.file = file;
  }

  public ModelLoadException(Path file, String problem, Throwable cause) {
    super(file.getFileName() + ": " + problem + " (" + file + ")", cause);
    this.file = file;
  }

  /** The file at fault. */
  public Path file() {
    return file;
  }
}
