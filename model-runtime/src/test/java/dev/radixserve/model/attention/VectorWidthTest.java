package dev.radixserve.model.attention;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The Vector API kernel at both vector widths it takes (256 bits on AVX2 and AVX-512, 128 on
 * NEON and SSE), whatever this CPU is: the width is fixed per JVM (a static final species, so
 * that C2 folds it), so each width runs in a child JVM with
 * {@code -Dradixserve.attention.vectorBits}. The 128-bit path had no test on x86 before.
 */
class VectorWidthTest {

  /** 8 vectors of 128 or 256 bits (the unrolled path), 4, and a head with a scalar tail. */
  private static final int[] HEAD_SIZES = {64, 32, 40};

  /** Run by the child JVM: the kernel against the naive attention for every head size. */
  public static void main(String[] args) {
    double worst = 0;
    for (int headSize : HEAD_SIZES) {
      try (Arena arena = Arena.ofShared()) {
        AttentionCase c = new AttentionCase(arena, 17L + headSize, 4, 2, headSize, 16, 48,
            PagedAttentionKernelTest.MIXED);
        double[][] expected = c.expected(PagedAttentionKernelTest.floats(c.keyCache),
            PagedAttentionKernelTest.floats(c.valueCache));
        new PagedAttentionKernel(4, 2, headSize, 0f, RowAttention.VectorSupport.create())
            .run(c.step(), PagedAttentionKernel.Parallel.SERIAL);
        worst = Math.max(worst, c.maxError(expected));
      }
    }
    System.out.println("bits " + VectorRowAttention.vectorBits() + " error " + worst);
  }

  @ParameterizedTest(name = "{0} bits")
  @ValueSource(ints = {128, 256})
  void matchesNaiveAttentionAtEveryWidth(int bits) throws Exception {
    String java = ProcessHandle.current().info().command().orElse("java");
    Process child = new ProcessBuilder(List.of(java, "--add-modules=jdk.incubator.vector",
        "--enable-native-access=ALL-UNNAMED", "-D" + VectorRowAttention.BITS_PROPERTY + "=" + bits,
        "-cp", System.getProperty("java.class.path"), VectorWidthTest.class.getName()))
        .redirectErrorStream(true).start();
    String out = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(child.waitFor(120, TimeUnit.SECONDS) && child.exitValue() == 0,
        "child JVM failed: " + out);
    String[] line = out.lines().filter(l -> l.startsWith("bits ")).findFirst()
        .orElseThrow(() -> new AssertionError("no result in: " + out)).split(" ");
    assertEquals(bits, Integer.parseInt(line[1]), out);
    assertTrue(Double.parseDouble(line[3]) < 1e-4, out);
  }
}
