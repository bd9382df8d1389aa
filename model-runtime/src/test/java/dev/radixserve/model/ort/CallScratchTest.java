package dev.radixserve.model.ort;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class CallScratchTest {

  @Test
  void slicesAreAlignedDisjointAndOutliveTheBufferInOverflow() {
    try (CallScratch s = CallScratch.begin()) {
      List<MemorySegment> got = new ArrayList<>();
      // far more than the 16 KB buffer: the rest comes from the overflow arena
      for (int i = 0; i < 3000; i++) {
        MemorySegment m = i % 3 == 0 ? s.allocate(ValueLayout.JAVA_INT)
            : s.allocate(ValueLayout.JAVA_LONG, 1 + i % 5);
        assertEquals(0, m.address() % (i % 3 == 0 ? 4 : 8), "aligned: " + i);
        m.fill((byte) i);
        got.add(m);
      }
      // nothing written later overwrote an earlier slice
      for (int i = 0; i < got.size(); i++) {
        MemorySegment m = got.get(i);
        for (long b = 0; b < m.byteSize(); b++) {
          assertEquals((byte) i, m.get(ValueLayout.JAVA_BYTE, b), "slice " + i);
        }
      }
    }
  }

  @Test
  void eachCallStartsAgainAtTheBufferStartAndNestingIsRefused() {
    long first;
    try (CallScratch s = CallScratch.begin()) {
      first = s.allocate(ValueLayout.ADDRESS).address();
      s.allocate(ValueLayout.JAVA_LONG, 100);
      IllegalStateException e = assertThrows(IllegalStateException.class, CallScratch::begin);
      assertTrue(e.getMessage().contains("nested"), e.getMessage());
    }
    try (CallScratch s = CallScratch.begin()) {
      assertEquals(first, s.allocate(ValueLayout.ADDRESS).address(), "reused, not grown");
    }
  }
}
