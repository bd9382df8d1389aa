package dev.radixserve.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.model.graph.KvDtype;
import dev.radixserve.model.quant.QuantMode;
import dev.radixserve.model.quant.QuantSpec;
import dev.radixserve.model.weights.LlamaWeights;
import dev.radixserve.model.weights.RandomLlama;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
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
  void aTemporaryFilesPagesGoAndTheLogitsStay(@TempDir Path dir) {
    pagedOutAndSame(new WeightStore(dir, null));
  }

  @Test
  void aCacheEntrysPagesGoAndTheLogitsStay(@TempDir Path dir) {
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

  private static void pagedOutAndSame(WeightStore store) {
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
      assertTrue(after < resident / 2, "resident " + resident + " bytes, after " + after);
      assertArrayEquals(before, r.forward(PROMPT)[0], "the logits changed after the page-out");
    }
  }
}
