package dev.radixserve.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.management.HotSpotDiagnosticMXBean;
import java.lang.management.ManagementFactory;
import java.lang.ref.Reference;
import org.junit.jupiter.api.Test;

class JavaHeapTest {

  private static final HotSpotDiagnosticMXBean VM =
      ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);

  private static String option(String name) {
    return VM.getVMOption(name).getValue();
  }

  @Test
  void putsTheFreeRatiosBackAfterTheCollection() {
    String min = option("MinHeapFreeRatio");
    String max = option("MaxHeapFreeRatio");
    JavaHeap.compact();
    assertEquals(min, option("MinHeapFreeRatio"));
    assertEquals(max, option("MaxHeapFreeRatio"));
  }

  private static byte[][] mebibytes(int n) {
    byte[][] chunks = new byte[n][];
    for (int i = 0; i < n; i++) {
      chunks[i] = new byte[1 << 20];
    }
    return chunks;
  }

  @Test
  void leavesAtMostAFifthOfTheHeapFree() {
    byte[][] live = mebibytes(48);
    // the heap grows to hold 240 MiB, then 192 of it becomes garbage
    byte[][] dropped = mebibytes(192);
    assertEquals(192, dropped.length);
    dropped = null;
    JavaHeap.compact();
    Runtime rt = Runtime.getRuntime();
    long committed = rt.totalMemory();
    long used = committed - rt.freeMemory();
    // G1 sizes in whole regions: 16 MiB of slack. A plain full collection leaves up to 70%
    // free (160 MiB committed for these 48 live); this one at most 20% (60)
    long bound = (long) (used / (1 - JavaHeap.MAX_FREE_PERCENT / 100.0)) + (16L << 20);
    assertTrue(committed <= bound,
        "committed " + (committed >> 20) + " MiB for " + (used >> 20) + " MiB used");
    assertEquals(48, live.length);
    Reference.reachabilityFence(live);
  }

  @Test
  void keepsAUserBoundThatIsAlreadyLower() throws Exception {
    String min = option("MinHeapFreeRatio");
    String max = option("MaxHeapFreeRatio");
    try {
      VM.setVMOption("MinHeapFreeRatio", "1");
      VM.setVMOption("MaxHeapFreeRatio", "10");
      JavaHeap.compact();
      assertEquals("10", option("MaxHeapFreeRatio"));
      assertEquals("1", option("MinHeapFreeRatio"));
    } finally {
      VM.setVMOption("MaxHeapFreeRatio", max);
      VM.setVMOption("MinHeapFreeRatio", min);
    }
  }
}
