package dev.radixserve.model.attention;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

/**
 * A random paged-attention step and its naive float64 answer: sequences with shuffled block ids,
 * some sharing full prefix blocks with another, prefill chunks and single decode tokens mixed,
 * partial last blocks; pool and new rows filled with random values.
 */
final class AttentionCase {

  final int heads;
  final int kvHeads;
  final int headSize;
  final int blockSize;
  final int numBlocks;
  final int[] past;
  final int[] fresh;
  final int[] cu;
  final int maxBlocks;
  final int[] tables;
  final int tokens;
  final MemorySegment query;
  final MemorySegment key;
  final MemorySegment value;
  final MemorySegment keyCache;
  final MemorySegment valueCache;
  final MemorySegment output;

  /**
   * @param shapes per sequence {past, new tokens, index of a sequence to share full past blocks
   *     with or -1}
   */
  AttentionCase(Arena arena, long seed, int heads, int kvHeads, int headSize, int blockSize,
      int numBlocks, int[][] shapes) {
    this(arena, seed, heads, kvHeads, headSize, blockSize, numBlocks, shapes, true);
  }

  /** @param shuffled block ids in random order; false: each sequence's own blocks in a run */
  AttentionCase(Arena arena, long seed, int heads, int kvHeads, int headSize, int blockSize,
      int numBlocks, int[][] shapes, boolean shuffled) {
    this.heads = heads;
    this.kvHeads = kvHeads;
    this.headSize = headSize;
    this.blockSize = blockSize;
    this.numBlocks = numBlocks;
    Random random = new Random(seed);
    int seqs = shapes.length;
    past = new int[seqs];
    fresh = new int[seqs];
    cu = new int[seqs + 1];
    int longest = 0;
    for (int s = 0; s < seqs; s++) {
      past[s] = shapes[s][0];
      fresh[s] = shapes[s][1];
      cu[s + 1] = cu[s] + fresh[s];
      longest = Math.max(longest, blocks(past[s] + fresh[s]) + 1);
    }
    tokens = cu[seqs];
    maxBlocks = longest;
    List<Integer> free = new ArrayList<>();
    for (int b = 0; b < numBlocks; b++) {
      free.add(b);
    }
    if (shuffled) {
      Collections.shuffle(free, random);
    } else {
      Collections.reverse(free); // removeLast below then takes 0, 1, 2, ...
    }
    tables = new int[seqs * maxBlocks];
    for (int s = 0; s < seqs; s++) {
      int share = shapes[s][2];
      int shared = share < 0 ? 0 : Math.min(past[s], past[share]) / blockSize;
      for (int k = 0; k < maxBlocks; k++) {
        // padding beyond the needed blocks: any id, as a caller may leave there
        tables[s * maxBlocks + k] = k < shared ? tables[share * maxBlocks + k]
            : k < blocks(past[s] + fresh[s]) ? free.removeLast() : random.nextInt(numBlocks);
      }
    }
    int row = heads * headSize;
    int kvRow = kvHeads * headSize;
    query = fill(arena, (long) tokens * row, random);
    key = fill(arena, (long) tokens * kvRow, random);
    value = fill(arena, (long) tokens * kvRow, random);
    keyCache = fill(arena, (long) numBlocks * blockSize * kvRow, random);
    valueCache = fill(arena, (long) numBlocks * blockSize * kvRow, random);
    output = arena.allocate((long) tokens * row * Float.BYTES, 64);
  }

  int blocks(int positions) {
    return (positions + blockSize - 1) / blockSize;
  }

  private static MemorySegment fill(Arena arena, long floats, Random random) {
    MemorySegment m = dev.radixserve.model.HugePages.allocate(arena,
        Math.max(1, floats) * Float.BYTES);
    for (long i = 0; i < floats; i++) {
      m.setAtIndex(ValueLayout.JAVA_FLOAT, i, (float) random.nextGaussian());
    }
    return m.asSlice(0, floats * Float.BYTES);
  }

  PagedAttentionStep step() {
    return new PagedAttentionStep(query, key, value, keyCache, valueCache, output, tokens,
        numBlocks, blockSize, headSize, cu.clone(), past.clone(), tables.clone(), maxBlocks);
  }

  /** Slot index (block * B + offset) of position p of sequence s. */
  long slot(int s, int p) {
    return (long) tables[s * maxBlocks + p / blockSize] * blockSize + p % blockSize;
  }

  /**
   * The expected output [T, H*D] in float64, from the pool as it is <em>before</em> the step and
   * the new rows.
   */
  double[][] expected(float[] poolKeys, float[] poolValues) {
    return expected(poolKeys, poolValues, 0, 0);
  }

  /**
   * The expected output with a sliding window and a soft cap, as Hugging Face computes them: a
   * query at position p sees positions j with p - window < j <= p (window 0: all), and a score is
   * {@code softcap * tanh(score / softcap)} (softcap 0: none) before the softmax. Positions before
   * a window are not read here either.
   */
  double[][] expected(float[] poolKeys, float[] poolValues, int window, double softcap) {
    int kvRow = kvHeads * headSize;
    double[][] out = new double[tokens][heads * headSize];
    double scale = 1 / Math.sqrt(headSize);
    for (int s = 0; s < past.length; s++) {
      for (int t = cu[s]; t < cu[s + 1]; t++) {
        int p = past[s] + t - cu[s];
        int from = window == 0 ? 0 : Math.max(0, p - window + 1);
        for (int h = 0; h < heads; h++) {
          int g = h / (heads / kvHeads);
          double[] scores = new double[p + 1];
          double max = Double.NEGATIVE_INFINITY;
          for (int j = from; j <= p; j++) {
            double dot = 0;
            for (int d = 0; d < headSize; d++) {
              dot += query.getAtIndex(ValueLayout.JAVA_FLOAT, (long) t * heads * headSize
                  + h * headSize + d) * keyAt(s, j, g, d, poolKeys, key, kvRow);
            }
            scores[j] = softcap == 0 ? dot * scale : softcap * Math.tanh(dot * scale / softcap);
            max = Math.max(max, scores[j]);
          }
          double sum = 0;
          for (int j = from; j <= p; j++) {
            scores[j] = Math.exp(scores[j] - max);
            sum += scores[j];
          }
          for (int d = 0; d < headSize; d++) {
            double acc = 0;
            for (int j = from; j <= p; j++) {
              acc += scores[j] / sum * keyAt(s, j, g, d, poolValues, value, kvRow);
            }
            out[t][h * headSize + d] = acc;
          }
        }
      }
    }
    return out;
  }

  /** Position j's row for kv head g: from the pool for the past, from the new rows after. */
  private double keyAt(int s, int j, int g, int d, float[] pool, MemorySegment rows, int kvRow) {
    if (j < past[s]) {
      return pool[(int) (slot(s, j) * kvRow + g * headSize + d)];
    }
    int t = cu[s] + j - past[s];
    return rows.getAtIndex(ValueLayout.JAVA_FLOAT, (long) t * kvRow + g * headSize + d);
  }

  /** max |actual - expected| over the output. */
  double maxError(double[][] expected) {
    double worst = 0;
    int row = heads * headSize;
    for (int t = 0; t < tokens; t++) {
      for (int i = 0; i < row; i++) {
        double a = output.getAtIndex(ValueLayout.JAVA_FLOAT, (long) t * row + i);
        worst = Math.max(worst, Math.abs(a - expected[t][i]));
      }
    }
    return worst;
  }
}
