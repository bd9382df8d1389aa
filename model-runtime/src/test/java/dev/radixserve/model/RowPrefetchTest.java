package dev.radixserve.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.model.graph.ExternalInitializer;
import dev.radixserve.model.graph.GraphDtype;
import dev.radixserve.model.graph.KvDtype;
import dev.radixserve.model.graph.OnnxGraph;
import dev.radixserve.model.ort.ElementType;
import dev.radixserve.model.quant.QuantMode;
import dev.radixserve.model.quant.QuantSpec;
import dev.radixserve.model.weights.LlamaWeights;
import dev.radixserve.model.weights.RandomGpt2;
import dev.radixserve.model.weights.RandomLlama;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * The read-ahead of the rows a step reads by token id: which tables it covers (exactly what the
 * graph gathers by {@code input_ids}), and that a token asked for has its rows in the page cache
 * afterwards while a token not asked for does not.
 */
@EnabledOnOs(OS.LINUX)
class RowPrefetchTest {

  private static final LlamaConfig TIED =
      LlamaConfig.llama(1, 256, 4, 2, 512, 64, 32_768).withTiedEmbeddings();

  /** A quantized tied table: its codes, scales and zero points, as the gather declares them. */
  @Test
  void aQuantizedTablesCodesScalesAndZeroPointsAreItsRows() {
    QuantSpec quant = QuantSpec.of(QuantMode.INT4).resolvedFor(TIED.hiddenSize());
    try (LlamaWeights w = RandomLlama.create(TIED, 5)) {
      OnnxGraph graph = w.graph().build(16, GraphDtype.FLOAT32, quant, KvDtype.FLOAT32);
      long[] offsets = WeightsFile.layout(graph.initializers()).offsets();
      List<RowPrefetch.Table> expected = new ArrayList<>();
      for (int i = 0; i < offsets.length; i++) {
        ExternalInitializer init = graph.initializers().get(i);
        if (Stream.of(".gather_q", ".gather_scales", ".gather_zero_points")
            .anyMatch(init.name()::endsWith)) {
          expected.add(new RowPrefetch.Table(offsets[i], bytes(init) / TIED.vocabSize(),
              TIED.vocabSize()));
        }
      }
      assertEquals(3, expected.size());
      assertEquals(Set.copyOf(expected), Set.copyOf(RowPrefetch.tables(graph, offsets)));
    }
  }

  /** A float model gathers its token table by id, and its position table by position: not read. */
  @Test
  void aFloatModelsTokenTableIsItsOnlyTable() {
    var config = OnnxModelRunnerTest.TINY;
    try (var w = RandomGpt2.create(config, 11)) {
      OnnxGraph graph = w.graph().build(16);
      long[] offsets = WeightsFile.layout(graph.initializers()).offsets();
      List<RowPrefetch.Table> tables = RowPrefetch.tables(graph, offsets);
      int wte = WeightsFile.positions(graph.initializers()).get("wte.weight");
      assertEquals(List.of(new RowPrefetch.Table(offsets[wte],
          (long) config.hiddenSize() * Float.BYTES, config.vocabSize())), tables);
    }
  }

  /**
   * A runner over a cache entry (its file stays, so the test can look at its pages): once the
   * session is made the table's pages are out of the page cache ({@link WeightPages#readByRow});
   * asked for one token, its code, scale and zero-point pages come in, and another token's stay
   * out.
   */
  @Test
  void aTokenAskedForHasItsRowsReadAndNoOther(@TempDir Path dir) throws Exception {
    QuantSpec quant = QuantSpec.of(QuantMode.INT4).resolvedFor(TIED.hiddenSize());
    try (LlamaWeights w = RandomLlama.create(TIED, 5);
        OnnxModelRunner r = OnnxModelRunner.create(w, 16, 8, 1, Map.of(), quant,
            KvDtype.FLOAT32, WeightStore.cache(dir, "checkpoint"));
        Arena arena = Arena.ofConfined()) {
      OnnxGraph graph = w.graph().build(16, GraphDtype.FLOAT32, quant, KvDtype.FLOAT32);
      List<RowPrefetch.Table> tables =
          RowPrefetch.tables(graph, WeightsFile.layout(graph.initializers()).offsets());
      MemorySegment file = map(onlyFile(dir), arena);
      int asked = 20_000;
      int other = 9_000; // on other pages of every table than 20,000's
      assertFalse(anyLoaded(file, tables, asked), "the rows were in the page cache before");
      r.prefetchRows(new int[] {1, asked, 2}, 1, 2);
      // the read is asynchronous: wait for it (a minute at most), then look at the other token
      for (int i = 0; i < 600 && !allLoaded(file, tables, asked); i++) {
        Thread.sleep(100);
      }
      assertTrue(allLoaded(file, tables, asked), "token " + asked + "'s rows were not read");
      assertFalse(anyLoaded(file, tables, other), "token " + other + "'s rows were read");
    }
  }

  private static long bytes(ExternalInitializer init) {
    long bytes = ElementType.ofCode(init.elemType()).bytes();
    for (long d : init.dims()) {
      bytes *= d;
    }
    return bytes;
  }

  private static Path onlyFile(Path dir) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      List<Path> weights = files.filter(p -> p.toString().endsWith(".weights")).toList();
      assertEquals(1, weights.size(), "weights files in the cache: " + weights);
      return weights.get(0);
    }
  }

  /** The whole file, mapped read-only and never touched: its pages' residency is the cache's. */
  private static MemorySegment map(Path file, Arena arena) throws IOException {
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
      return channel.map(FileChannel.MapMode.READ_ONLY, 0, channel.size(), arena);
    }
  }

  private static boolean allLoaded(MemorySegment file, List<RowPrefetch.Table> tables, int id) {
    return tables.stream().allMatch(t -> row(file, t, id).isLoaded());
  }

  private static boolean anyLoaded(MemorySegment file, List<RowPrefetch.Table> tables, int id) {
    return tables.stream().anyMatch(t -> row(file, t, id).isLoaded());
  }

  private static MemorySegment row(MemorySegment file, RowPrefetch.Table t, int id) {
    return file.asSlice(t.offset() + id * t.rowBytes(), t.rowBytes());
  }
}
