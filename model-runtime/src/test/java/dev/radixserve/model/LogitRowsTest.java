package dev.radixserve.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

class LogitRowsTest {

  private static MemorySegment logits(Arena arena, int rows, int vocab, float base) {
    float[] values = new float[rows * vocab];
    for (int i = 0; i < values.length; i++) {
      values[i] = base + i;
    }
    return arena.allocateFrom(ValueLayout.JAVA_FLOAT, values);
  }

  @Test
  void handsOutItsRowsAgainWithTheNewValues() {
    try (Arena arena = Arena.ofConfined()) {
      LogitRows rows = new LogitRows();
      float[][] first = rows.copy(logits(arena, 2, 5, 0f), 2, 5);
      assertArrayEquals(new float[] {5, 6, 7, 8, 9}, first[1]);
      float[] firstRow = first[0];
      float[][] second = rows.copy(logits(arena, 3, 5, 100f), 3, 5);
      assertEquals(3, second.length);
      assertSame(firstRow, second[0]); // reused, not allocated again
      assertArrayEquals(new float[] {100, 101, 102, 103, 104}, second[0]);
      assertArrayEquals(new float[] {110, 111, 112, 113, 114}, second[2]);
      float[][] one = rows.copy(logits(arena, 1, 5, -1f), 1, 5);
      assertEquals(1, one.length);
      assertArrayEquals(new float[] {-1, 0, 1, 2, 3}, one[0]);
    }
  }

  @Test
  void anotherVocabularyGetsRowsOfItsLength() {
    try (Arena arena = Arena.ofConfined()) {
      LogitRows rows = new LogitRows();
      float[] old = rows.copy(logits(arena, 1, 5, 0f), 1, 5)[0];
      float[][] wider = rows.copy(logits(arena, 2, 7, 0f), 2, 7);
      assertNotSame(old, wider[0]);
      assertEquals(7, wider[0].length);
      assertArrayEquals(new float[] {7, 8, 9, 10, 11, 12, 13}, wider[1]);
    }
  }

  @Test
  void separateInstancesShareNoRows() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment data = logits(arena, 1, 4, 0f);
      assertNotSame(new LogitRows().copy(data, 1, 4)[0], new LogitRows().copy(data, 1, 4)[0]);
    }
  }
}
