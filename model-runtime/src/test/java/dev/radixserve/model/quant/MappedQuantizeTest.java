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

  @ParameterizedTest(name = "{0} bits, zero points {1}, ranges of {2} rows")
  @CsvSource({"8, false, 0", "4, true, 0", "8, true, 300", "4, false, 300"})
  void aMappedTablesPagesGoAndItsBlocksAreTheHeapTables(int bits, boolean zeroPoints,
      int rangeRows, @TempDir Path dir) throws IOException {
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
      // made in one range, or in ranges of 300 rows on the common pool (each range drops its
      // own slices, and its last rows when it is done)
      QuantizedWeight fromFile = BlockQuantizer.quantize(table, WeightLayout.OUT_IN, bits, 32,
          zeroPoints, 64 << 10, rangeRows == 0 ? Long.MAX_VALUE : (long) rangeRows * k);
      QuantizedWeight fromHeap = BlockQuantizer.quantize(BlockQuantizerTest.tensor("heap",
          values, n, k), WeightLayout.OUT_IN, bits, 32, zeroPoints);
      assertArrayEquals(fromHeap.packed(), fromFile.packed());
      assertArrayEquals(fromHeap.scales(), fromFile.scales());
      assertArrayEquals(fromHeap.zeroPoints(), fromFile.zeroPoints());
      // every slice is dropped behind the reader; in ranges, a range's fault may also map the
      // next range's first pages after that range dropped them (Linux maps up to 64 KiB around a
      // fault from the page cache): at most that much at each of the 6 boundaries stays
      long after = residentKib(file);
      long boundaries = rangeRows == 0 ? 0 : (n + rangeRows - 1) / rangeRows - 1;
      assertTrue(after <= 64 * boundaries + 8, "resident after quantizing: " + after + " KiB of "
          + before);
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
