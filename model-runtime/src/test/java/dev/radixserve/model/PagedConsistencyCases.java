package dev.radixserve.model;

import static dev.radixserve.model.OnnxModelRunnerTest.BLOCK;
import static dev.radixserve.model.OnnxModelRunnerTest.prompt;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Same logits however a prompt reaches the pool: at once, in chunks, token by token, batched
 * with other sequences, or over prefix blocks another sequence computed. One subclass per model
 * family ({@link PagedConsistencyTest}, {@link LlamaPagedConsistencyTest}): 64 positions,
 * vocabulary 97.
 */
abstract class PagedConsistencyCases {

  private static final int[] TABLE = {21, 5, 40, 13, 2, 33, 9, 27, 16, 44, 1, 38, 7, 30, 19, 11};
  private static final int[] OTHER = {3, 36, 22, 10, 41, 6, 29, 15, 0, 25, 34, 18, 43, 8, 31, 12};
  private ModelWeights weights;
  private OnnxModelRunner runner;

  /** The family's weights, 64 positions, vocabulary 97. */
  abstract ModelWeights createWeights();

  /** The family's float64 reference: logits at every position. */
  abstract double[][] reference(ModelWeights weights, int[] tokens);

  @BeforeEach
  void open() {
    weights = createWeights();
    runner = OnnxModelRunner.create(weights, BLOCK, 48, 1);
  }

  @AfterEach
  void close() {
    runner.close();
    weights.close();
  }

  static void assertClose(float[] expected, float[] actual, double tolerance) {
    double maxDiff = 0;
    double maxRef = 0;
    for (int i = 0; i < expected.length; i++) {
      maxDiff = Math.max(maxDiff, Math.abs(expected[i] - actual[i]));
      maxRef = Math.max(maxRef, Math.abs(expected[i]));
    }
    assertTrue(maxDiff / maxRef <= tolerance, "relative difference " + maxDiff / maxRef);
  }

  private float[] prefillInChunks(int[] tokens, int chunk, int[] table) {
    float[] last = null;
    for (int start = 0; start < tokens.length; start += chunk) {
      int[] part = Arrays.copyOfRange(tokens, start, Math.min(tokens.length, start + chunk));
      last = runner.forward(new ForwardBatch(List.of(new ForwardBatch.Seq(part, start, table))))[0];
    }
    return last;
  }

  @Test
  void chunkSizesAgree() {
    int[] tokens = prompt(37, 4);
    double[] ref = reference(weights, tokens)[tokens.length - 1];
    float[] whole = prefillInChunks(tokens, tokens.length, TABLE);
    assertTrue(OnnxModelRunnerTest.relativeError(whole, ref) <= 1e-4);
    for (int chunk : new int[] {1, 3, 16, 17}) {
      assertClose(whole, prefillInChunks(tokens, chunk, TABLE), 1e-5);
    }
  }

  @Test
  void mixedBatchAgreesWithAlone() {
    int[] a = prompt(19, 1);
    int[] b = prompt(26, 2);
    int[] c = prompt(6, 3);
    float[] aAlone = prefillInChunks(a, a.length, TABLE);
    float[] cAlone = prefillInChunks(c, c.length, OTHER);
    // b: prefilled to 25 tokens alone in other blocks, its last token decoded in the batch
    int[] bTable = {47, 46, 45, 24, 26, 37, 35};
    prefillInChunks(Arrays.copyOf(b, 25), 25, bTable);
    float[] bAlone = runner.forward(new ForwardBatch(List.of(
        new ForwardBatch.Seq(new int[] {b[25]}, 25, bTable))))[0];

    // same computations again, batched: a's 2nd chunk, b's decode token, c's whole prompt
    try (OnnxModelRunner fresh = OnnxModelRunner.create(weights, BLOCK, 48, 1)) {
      fresh.forward(new ForwardBatch(List.of(
          new ForwardBatch.Seq(Arrays.copyOf(a, 11), 0, TABLE),
          new ForwardBatch.Seq(Arrays.copyOf(b, 25), 0, bTable))));
      float[][] mixed = fresh.forward(new ForwardBatch(List.of(
          new ForwardBatch.Seq(Arrays.copyOfRange(a, 11, 19), 11, TABLE),
          new ForwardBatch.Seq(new int[] {b[25]}, 25, bTable),
          new ForwardBatch.Seq(c, 0, OTHER))));
      assertClose(aAlone, mixed[0], 1e-5);
      assertClose(bAlone, mixed[1], 1e-5);
      assertClose(cAlone, mixed[2], 1e-5);
    }
  }

  @Test
  void aStepWithMoreTokensThanPositionsMatchesEachSequenceAlone() {
    // three 40-token prompts in one step: 120 tokens, past the model's 64 positions
    int[][] prompts = {prompt(40, 11), prompt(40, 12), prompt(40, 13)};
    int[][] tables = new int[3][10];
    for (int s = 0; s < 3; s++) {
      for (int b = 0; b < 10; b++) {
        tables[s][b] = s * 10 + b;
      }
    }
    List<ForwardBatch.Seq> seqs = new java.util.ArrayList<>();
    for (int s = 0; s < 3; s++) {
      seqs.add(new ForwardBatch.Seq(prompts[s], 0, tables[s]));
    }
    float[][] together = runner.forward(new ForwardBatch(seqs));
    for (int s = 0; s < 3; s++) {
      double[] ref = reference(weights, prompts[s])[prompts[s].length - 1];
      assertTrue(OnnxModelRunnerTest.relativeError(together[s], ref) <= 1e-4, "sequence " + s);
    }
  }

  @Test
  void sharedPrefixBlocksAreReused() {
    int[] first = prompt(30, 5);
    prefillInChunks(first, 30, TABLE);
    // second sequence: same first 24 tokens (6 full blocks), then its own suffix
    int[] second = Arrays.copyOf(first, 33);
    for (int i = 24; i < 33; i++) {
      second[i] = (i * 7 + 1) % 97;
    }
    int[] secondTable = Arrays.copyOf(TABLE, 9);
    secondTable[6] = 42;
    secondTable[7] = 4;
    secondTable[8] = 23;
    float[] reused = runner.forward(new ForwardBatch(List.of(new ForwardBatch.Seq(
        Arrays.copyOfRange(second, 24, 33), 24, secondTable))))[0];
    double[] ref = reference(weights, second)[32];
    assertTrue(OnnxModelRunnerTest.relativeError(reused, ref) <= 1e-4);
    float[] own = prefillInChunks(second, 33, OTHER);
    assertClose(own, reused, 1e-5);
  }

  @Test
  void allLogitsRowsMatchTheReferenceAtEveryPosition() {
    int[] a = prompt(10, 7);
    int[] b = prompt(5, 8);
    double[][] refA = reference(weights, a);
    ForwardBatch batch = new ForwardBatch(List.of(
        new ForwardBatch.Seq(new int[] {b[0], b[1]}, 0, OTHER),
        new ForwardBatch.Seq(Arrays.copyOf(a, 6), 0, TABLE, true)));
    float[][] first = runner.forward(batch);
    assertEquals(7, first.length);
    assertEquals(1, batch.firstRow(1));
    assertEquals(6, batch.lastRow(1));
    for (int p = 0; p < 6; p++) {
      assertTrue(OnnxModelRunnerTest.relativeError(first[1 + p], refA[p]) <= 1e-4, "position " + p);
    }
    // the rest of a in a second chunk, all rows again, now listed first
    float[][] second = runner.forward(new ForwardBatch(List.of(
        new ForwardBatch.Seq(Arrays.copyOfRange(a, 6, 10), 6, TABLE, true),
        new ForwardBatch.Seq(new int[] {b[2]}, 2, OTHER))));
    assertEquals(5, second.length);
    for (int p = 6; p < 10; p++) {
      assertTrue(OnnxModelRunnerTest.relativeError(second[p - 6], refA[p]) <= 1e-4, "position " + p);
    }
    assertTrue(OnnxModelRunnerTest.relativeError(second[4],
        reference(weights, Arrays.copyOf(b, 3))[2]) <= 1e-4);
  }

  @Test
  void blockCopyStartsASequenceInsideACachedBlock() {
    // a: 10 tokens in TABLE (blocks 21, 5, 40: the last holds positions 8, 9)
    int[] a = prompt(10, 9);
    prefillInChunks(a, 10, TABLE);
    float[][] srcKeys = new float[BLOCK][];
    for (int slot = 0; slot < BLOCK; slot++) {
      srcKeys[slot] = runner.kvPool().keyRow(1, TABLE[1], slot);
    }
    // b shares a's first 6 tokens: reuses block 21, copies slots 0-1 of block 5 into its own 42
    int[] b = Arrays.copyOf(a, 9);
    b[6] = 50;
    b[7] = 51;
    b[8] = 52;
    int[] bTable = {TABLE[0], 42, 4};
    float[] cow = runner.forward(new ForwardBatch(
        List.of(new ForwardBatch.Seq(Arrays.copyOfRange(b, 6, 9), 6, bTable)),
        List.of(new ForwardBatch.BlockCopy(TABLE[1], 42, 2))))[0];
    for (int layer = 0; layer < weights.config().nLayer(); layer++) {
      for (int slot = 0; slot < 2; slot++) {
        assertArrayEquals(runner.kvPool().keyRow(layer, TABLE[1], slot),
            runner.kvPool().keyRow(layer, 42, slot));
        assertArrayEquals(runner.kvPool().valueRow(layer, TABLE[1], slot),
            runner.kvPool().valueRow(layer, 42, slot));
      }
    }
    for (int slot = 0; slot < BLOCK; slot++) {
      assertArrayEquals(srcKeys[slot], runner.kvPool().keyRow(1, TABLE[1], slot));
    }
    float[] cold = prefillInChunks(b, 9, OTHER);
    assertClose(cold, cow, 1e-5);
    var bad = assertThrows(IllegalArgumentException.class, () -> runner.forward(new ForwardBatch(
        List.of(new ForwardBatch.Seq(new int[] {1}, 0, new int[] {3})),
        List.of(new ForwardBatch.BlockCopy(48, 3, 1)))));
    assertEquals("block copy 0: 48 -> 3 outside [0, 48)", bad.getMessage());
  }

  @Test
  void newKeysLandInTheirSlots() {
    int[] tokens = prompt(7, 6);
    runner.forward(new ForwardBatch(List.of(new ForwardBatch.Seq(tokens, 0, TABLE))));
    // position 5 -> block TABLE[1] = 5, slot 1; never-written slots stay zero
    float[] row = runner.kvPool().keyRow(0, TABLE[1], 1);
    assertTrue(Arrays.stream(toDoubles(row)).anyMatch(v -> v != 0));
    assertEquals(0f, runner.kvPool().keyRow(0, TABLE[1], 3)[0]);
  }

  private static double[] toDoubles(float[] f) {
    double[] d = new double[f.length];
    for (int i = 0; i < f.length; i++) {
      d[i] = f[i];
    }
    return d;
  }

  @Test
  void badBatchesAreRejected() {
    var shortTable = assertThrows(IllegalArgumentException.class, () -> runner.forward(
        new ForwardBatch(List.of(new ForwardBatch.Seq(prompt(9, 1), 0, new int[] {1, 2})))));
    assertEquals("sequence 0: block table has 2 blocks, 3 needed for 9 tokens of block size 4",
        shortTable.getMessage());
    var outOfRange = assertThrows(IllegalArgumentException.class, () -> runner.forward(
        new ForwardBatch(List.of(new ForwardBatch.Seq(prompt(3, 1), 0, new int[] {48})))));
    assertEquals("sequence 0: block id 48 at table index 0 outside [0, 48)", outOfRange.getMessage());
    int[] longTable = new int[17];
    var tooLong = assertThrows(IllegalArgumentException.class, () -> runner.forward(
        new ForwardBatch(List.of(new ForwardBatch.Seq(new int[] {1}, 64, longTable)))));
    assertEquals("sequence 0: position 64 >= n_positions 64", tooLong.getMessage());
    var badToken = assertThrows(IllegalArgumentException.class, () -> runner.forward(
        new ForwardBatch(List.of(new ForwardBatch.Seq(new int[] {97}, 0, new int[] {0})))));
    assertEquals("sequence 0: token id 97 outside [0, 97)", badToken.getMessage());
  }

  @Test
  void closeTwiceIsSafeAndUseAfterCloseFails() {
    runner.close();
    runner.close();
    var e = assertThrows(IllegalStateException.class, () -> runner.forward(
        new ForwardBatch(List.of(new ForwardBatch.Seq(new int[] {1}, 0, new int[] {0})))));
    assertEquals("the model runner is closed", e.getMessage());
  }
}
