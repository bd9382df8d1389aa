package dev.radixserve.model;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** Copies the graph's {@code logits} output, float [rows, vocab], into one Java array per row. */
final class LogitRows {

  private LogitRows() {}

  static float[][] copy(MemorySegment data, int rows, int vocab) {
    float[][] logits = new float[rows][vocab];
    for (int s = 0; s < rows; s++) {
      MemorySegment.copy(data, ValueLayout.JAVA_FLOAT, (long) s * vocab * Float.BYTES,
          logits[s], 0, vocab);
    }
    return logits;
  }
}
