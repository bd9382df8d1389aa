package dev.radixserve.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.model.graph.KvDtype;
import dev.radixserve.model.quant.QuantMode;
import dev.radixserve.model.quant.QuantSpec;
import dev.radixserve.model.weights.LlamaWeights;
import dev.radixserve.model.weights.RandomLlama;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * Paging out the weights file's mappings after the load: what was resident goes (MatMulNBits'
 * original scales and zero points, which its packed form replaced), and the model computes the
 * same logits after it, for a temporary (deleted) file and for a cache entry.
 */
@EnabledOnOs(OS.LINUX)
class WeightPagesTest {

  private static final LlamaConfig TIED =
      LlamaConfig.llama(2, 256, 4, 2, 512, 64, 1024).withTiedEmbeddings();
  private static final ForwardBatch PROMPT = new ForwardBatch(List.of(
      new ForwardBatch.Seq(new int[] {5, 17, 250, 3, 900, 41}, 0, new int[] {0})));

  @Test
  void aTemporaryFilesPagesGoAndTheLogitsStay(@TempDir Path dir) throws InterruptedException {
    pagedOutAndSame(new WeightStore(dir, null));
  }

  @Test
  void aCacheEntrysPagesGoAndTheLogitsStay(@TempDir Path dir) throws InterruptedException {
    pagedOutAndSame(WeightStore.cache(dir, "checkpoint"));
  }

  /**
   * A tied table of 32,768 rows (8 MiB at int8, the head's too, so the load reads all of it) read
   * for six tokens costs about their pages, not the table: before {@link WeightPages#readByRow}
   * it stayed resident whole after the load, and a row read after a page-out brought back up to
   * 2 MiB (read-ahead into the page cache's large folios). For a temporary file, a cache entry's
   * first start (the page cache holds what it wrote) and its second.
   */
  @Test
  void aTableReadForSixTokensCostsTheirPagesNotTheTable(@TempDir Path dir) {
    LlamaConfig wide = LlamaConfig.llama(1, 256, 4, 2, 512, 64, 32_768).withTiedEmbeddings();
    WeightStore cache = WeightStore.cache(dir.resolve("cache"), "checkpoint");
    for (WeightStore store : List.of(new WeightStore(dir.resolve("tmp"), null), cache, cache)) {
      try (LlamaWeights w = RandomLlama.create(wide, 5);
          OnnxModelRunner r = OnnxModelRunner.create(w, 16, 8, 1, Map.of(),
              QuantSpec.of(QuantMode.INT4).resolvedFor(wide.hiddenSize()), KvDtype.FLOAT32,
              store)) {
        r.forward(new ForwardBatch(List.of(new ForwardBatch.Seq(
            new int[] {7, 30_001, 12_345, 2, 20_000, 9_999}, 0, new int[] {0}))));
        long resident = WeightPages.residentBytes();
        // six rows and their scales: a page each, two per token; 256 KiB is ample
        assertTrue(resident < 256 * 1024, "the weights file's mappings hold " + resident
            + " bytes after six tokens, of an 8 MiB table");
      }
    }
  }

  /**
   * The pager {@link WeightsFile} runs while ONNX Runtime makes a session: what a mapping of the
   * file holds leaves the RSS while it runs, the mapping reads the same bytes after, and nothing
   * is paged out once it is closed.
   */
  @Test
  void thePagerPagesOutWhileItRunsAndStopsWhenClosed(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("weights.bin");
    byte[] bytes = new byte[8 << 20];
    new Random(11).nextBytes(bytes);
    Files.write(file, bytes);
    Set<String> files = Set.of(file.toAbsolutePath().toString());
    try (Arena arena = Arena.ofConfined();
        FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      MemorySegment mapped = ch.map(FileChannel.MapMode.READ_ONLY, 0, bytes.length, arena);
      long sum = pageSum(mapped);
      assertTrue(WeightPages.residentBytes(files) >= bytes.length / 2, "not resident once read");
      try (WeightPages.Pager pager = WeightPages.pagedWhileLoading(file, 10)) {
        long deadline = System.nanoTime() + 10_000_000_000L; // a wait for an event, not a timing
        while (WeightPages.residentBytes(files) > bytes.length / 8) {
          assertTrue(System.nanoTime() < deadline, "the pager paged nothing out in 10 s");
          Thread.sleep(10);
        }
      }
      assertEquals(sum, pageSum(mapped), "the mapping reads other bytes after the page-out");
      Thread.sleep(200); // twenty of the pager's periods: it would have paged out again by now
      assertTrue(WeightPages.residentBytes(files) >= bytes.length / 2,
          "paged out after the pager was closed");
    }
  }

  /** Reads a long from every page (so each is resident) and sums them. */
  private static long pageSum(MemorySegment m) {
    long sum = 0;
    for (long at = 0; at < m.byteSize(); at += 4096) {
      sum += m.get(ValueLayout.JAVA_LONG_UNALIGNED, at);
    }
    return sum;
  }

  private static void pagedOutAndSame(WeightStore store) throws InterruptedException {
    try (LlamaWeights w = RandomLlama.create(TIED, 3);
        OnnxModelRunner r = OnnxModelRunner.create(w, 16, 8, 1, Map.of(),
            QuantSpec.of(QuantMode.INT4).resolvedFor(TIED.hiddenSize()), KvDtype.FLOAT32,
            store)) {
      float[] before = r.forward(PROMPT)[0];
      assertFalse(WeightPages.mappings().isEmpty(), "ONNX Runtime maps no weights file");
      long resident = WeightPages.residentBytes();
      assertTrue(resident > 0, "nothing of the weights file is resident after a forward step");
      assertTrue(WeightPages.pageOut() > 0, "no mapping was paged out");
      long after = WeightPages.residentBytes();
      // pages can outlive one page-out (seen once in CI: 8 of 14), most likely ones the kernel still
      // held in another CPU's batch of pages to add to its LRU lists, which a page-out does not
      // drain (only its own CPU's): a later page-out, from that CPU, takes them. At most 5 s.
      for (int i = 0; i < 250 && after >= resident / 2; i++) {
        Thread.sleep(20);
        WeightPages.pageOut();
        after = WeightPages.residentBytes();
      }
      assertTrue(after < resident / 2, "resident " + resident + " bytes, after " + after);
      assertArrayEquals(before, r.forward(PROMPT)[0], "the logits changed after the page-out");
    }
  }
}
