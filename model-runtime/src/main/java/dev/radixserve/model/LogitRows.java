package dev.radixserve.model;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Copies the graph's {@code logits} output, float [rows, vocab], into one Java array per row.
 * An instance keeps its row arrays and hands them out again at the next {@link #copy}: a row of
 * a 128k vocabulary is 513 KB, most of what a served decode step allocated per token.
 */
final class LogitRows {

  private float[][] kept = new float[0][];

  /** The rows, in this instance's arrays: valid until its next call. */
  float[][] copy(MemorySegment data, int rows, int vocab) {
    if (kept.length < rows || (rows > 0 && kept[0].length != vocab)) {
      float[][] grown = new float[Math.max(rows, kept.length)][];
      for (int s = 0; s < grown.length; s++) {
        grown[s] = s < kept.length && kept[s].length == vocab ? kept[s] : new float[vocab];
      }
      kept = grown;
    }
    float[][] logits = new float[rows][];
    for (int s = 0; s < rows; s++) {
      logits[s] = kept[s];
      MemorySegment.copy(data, ValueLayout.JAVA_FLOAT, (long) s * vocab * Float.BYTES,
          logits[s], 0, vocab);
    }
    return logits;
  }
}
