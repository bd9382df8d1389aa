package dev.radixserve.model.quant;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Every row made exactly once, in ranges of the size asked for; small tensors on the caller. */
class RowRangesTest {

  @ParameterizedTest(name = "{0} rows of {1}, ranges of {2} weights")
  @CsvSource({"1000, 64, 640", "1000, 64, 64", "1001, 64, 6400", "7, 4096, 1",
      "128256, 2048, 4194304"})
  void everyRowIsMadeOnceInRangesOfTheSizeAskedFor(int rows, long rowWeights, long minWeights) {
    AtomicIntegerArray made = new AtomicIntegerArray(rows);
    Set<String> sizes = ConcurrentHashMap.newKeySet();
    RowRanges.forEach(rows, rowWeights, minWeights, (from, to) -> {
      sizes.add(from + ".." + to);
      for (int r = from; r < to; r++) {
        made.incrementAndGet(r);
      }
    });
    for (int r = 0; r < rows; r++) {
      assertEquals(1, made.get(r), "row " + r);
    }
    int per = (int) Math.max(1, minWeights / rowWeights);
    assertEquals((rows + per - 1) / per, sizes.size(), "ranges");
    for (String s : sizes) {
      String[] ft = s.split("\\.\\.");
      int length = Integer.parseInt(ft[1]) - Integer.parseInt(ft[0]);
      assertTrue(length == per || Integer.parseInt(ft[1]) == rows, s);
    }
  }

  @Test
  void aTensorUnderOneRangeIsMadeOnTheCallingThread() {
    Thread caller = Thread.currentThread();
    Set<Thread> threads = ConcurrentHashMap.newKeySet();
    RowRanges.forEach(512, 2048, (from, to) -> {
      assertEquals(0, from);
      assertEquals(512, to);
      threads.add(Thread.currentThread());
    });
    assertEquals(Set.of(caller), threads);
  }
}
