package dev.radixserve.model.quant;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.model.weights.DType;
import dev.radixserve.model.weights.Tensor;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.regex.Pattern;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Quantizing a memory-mapped [N, K] table drops its pages behind the reader ({@link
 * Tensor#releaseRows}) and gives the very blocks the same table gives from the heap: the release
 * changes what is resident, never what is read.
 */
@EnabledOnOs(OS.LINUX)
class MappedQuantizeTest {

  @ParameterizedTest(name = "{0} bits, zero points {1}")
  @CsvSource({"8, false", "4, true"})
  void aMappedTablesPagesGoAndItsBlocksAreTheHeapTables(int bits, boolean zeroPoints,
      @TempDir Path dir) throws IOException {
    int n = 2048; // rows (tokens of an embedding)
    int k = 256;
    float[] values = BlockQuantizerTest.weights(k, n, 7);
    Path file = dir.resolve("table.bf16");
    try (Arena arena = Arena.ofShared()) {
      MemorySegment bf16 = arena.allocate((long) n * k * 2);
      short[] stored = new short[n * k];
      for (int i = 0; i < stored.length; i++) {
        stored[i] = (short) (Float.floatToRawIntBits(values[i]) >>> 16);
        values[i] = Float.intBitsToFloat((stored[i] & 0xffff) << 16); // the bf16 values
      }
      MemorySegment.copy(stored, 0, bf16,
          ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 0, stored.length);
      Files.write(file, bf16.toArray(ValueLayout.JAVA_BYTE));
    }
    try (Arena arena = Arena.ofShared();
        FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      MemorySegment mapped = ch.map(FileChannel.MapMode.READ_ONLY, 0, (long) n * k * 2, arena);
      Tensor table = new Tensor("table", DType.BF16, new long[] {n, k}, mapped);
      mapped.load();
      long before = residentKib(file);
      assertTrue(before >= (long) n * k * 2 / 1024 * 9 / 10, "resident after load(): " + before);
      // 64 KiB slices: 128 rows of 512 bytes
      QuantizedWeight fromFile = BlockQuantizer.quantize(table, WeightLayout.OUT_IN, bits, 32,
          zeroPoints, 64 << 10);
      QuantizedWeight fromHeap = BlockQuantizer.quantize(BlockQuantizerTest.tensor("heap",
          values, n, k), WeightLayout.OUT_IN, bits, 32, zeroPoints);
      assertArrayEquals(fromHeap.packed(), fromFile.packed());
      assertArrayEquals(fromHeap.scales(), fromFile.scales());
      assertArrayEquals(fromHeap.zeroPoints(), fromFile.zeroPoints());
      // every slice but the last is dropped behind the reader: at most that slice stays
      long after = residentKib(file);
      assertTrue(after <= 128L * k * 2 / 1024 + 8, "resident after quantizing: " + after
          + " KiB of " + before);
    }
  }

  /** This process's resident KiB of {@code file}'s mappings ({@code /proc/self/smaps}). */
  private static long residentKib(Path file) throws IOException {
    long kib = 0;
    boolean ours = false;
    String name = file.toRealPath().toString();
    for (String line : Files.readAllLines(Path.of("/proc/self/smaps"))) {
      if (HEADER.matcher(line).lookingAt()) {
        ours = line.endsWith(" " + name);
      } else if (ours && line.startsWith("Rss:")) {
        kib += Long.parseLong(line.replaceAll("[^0-9]", ""));
      }
    }
    return kib;
  }

  private static final Pattern HEADER = Pattern.compile("[0-9a-f]+-[0-9a-f]+ ");
}
