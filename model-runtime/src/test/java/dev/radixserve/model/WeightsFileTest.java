package dev.radixserve.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.model.graph.ExternalInitializer;
import dev.radixserve.model.graph.GraphDtype;
import dev.radixserve.model.graph.OnnxGraph;
import dev.radixserve.model.quant.QuantMode;
import dev.radixserve.model.quant.QuantSpec;
import dev.radixserve.model.weights.LlamaWeights;
import dev.radixserve.model.weights.RandomLlama;
import dev.radixserve.model.weights.Tensor;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The weights file ONNX Runtime maps: a tied table's quantized blocks are written once for the
 * head and the embedding (whose bytes are the same), every initializer starts on its own page,
 * a temporary file is gone once the session exists, and a cache entry is written once and then
 * served from (same logits as the first start, file untouched); another quantization of the same
 * checkpoint is another entry.
 */
class WeightsFileTest {

  private static final LlamaConfig TIED =
      LlamaConfig.llama(2, 64, 4, 2, 128, 64, 260).withTiedEmbeddings();
  private static final int BLOCK = 16;

  private static QuantSpec int4WithHead() {
    return new QuantSpec(QuantMode.INT4, 32, true, QuantMode.INT4, 32, 4);
  }

  @Test
  void aTiedTablesBlocksAreWrittenOnceForTheHeadAndTheEmbedding() {
    try (LlamaWeights w = RandomLlama.create(TIED, 3)) {
      OnnxGraph graph = w.graph().build(BLOCK, GraphDtype.FLOAT32, int4WithHead());
      List<ExternalInitializer> inits = graph.initializers();
      WeightsFile.Layout layout = WeightsFile.layout(inits);
      Map<String, byte[]> made = new HashMap<>();
      WeightTensors.forEach(w.tensors(), inits, (i, data) -> {
        synchronized (made) {
          made.put(inits.get(i).name(), data.toArray(ValueLayout.JAVA_BYTE));
        }
      });
      int shared = 0;
      for (int i = 0; i < inits.size(); i++) {
        assertEquals(0, layout.offsets()[i] % 4096, inits.get(i).name());
        String name = inits.get(i).name();
        if (name.contains(".gather_")) {
          String head = name.replace(".gather_q", ".q").replace(".gather_", ".");
          int h = graph.initializerNames().indexOf(head);
          assertTrue(h >= 0, "no head initializer " + head + " beside " + name);
          assertEquals(layout.offsets()[h], layout.offsets()[i], name);
          assertTrue(layout.written()[h] != layout.written()[i], name + " written twice or never");
          assertArrayEquals(made.get(head), made.get(name), name + " is not " + head + "'s bytes");
          shared++;
        }
      }
      assertEquals(3, shared, "blocks, scales and zero points of the tied table");
      long written = 0;
      for (int i = 0; i < inits.size(); i++) {
        written += layout.written()[i] ? made.get(inits.get(i).name()).length : 0;
      }
      assertEquals(written, layout.dataBytes());
    }
  }

  /**
   * A dense weight's elements go over as they lie, so a tensor of the declared count in another
   * shape (the [out][in] rows of a weight declared [in, out]) is refused, not served transposed.
   */
  @Test
  void aDenseTensorInAnotherShapeThanDeclaredIsRefused() {
    try (LlamaWeights w = RandomLlama.create(TIED, 3)) {
      List<ExternalInitializer> inits = w.graph().build(BLOCK, GraphDtype.FLOAT32,
          QuantSpec.none()).initializers();
      String name = "layers.0.mlp.down_proj.weight";
      Tensor t = w.tensor(name);
      Map<String, Tensor> tensors = new HashMap<>(w.tensors());
      tensors.put(name, new Tensor(name, t.dtype(), new long[] {t.shape()[1], t.shape()[0]},
          t.data()));
      IllegalStateException e = assertThrows(IllegalStateException.class,
          () -> WeightTensors.forEach(tensors, inits, (i, data) -> { }));
      assertEquals("initializer " + name + " is declared [64, 128], but its tensor " + name
          + " is [128, 64]", e.getMessage());
    }
  }

  @Test
  void aTemporaryFileIsGoneOnceTheSessionExists(@TempDir Path dir) throws IOException {
    try (LlamaWeights w = RandomLlama.create(TIED, 3);
        OnnxModelRunner r = OnnxModelRunner.create(w, BLOCK, 8, 1, Map.of(), int4WithHead(),
            dev.radixserve.model.graph.KvDtype.FLOAT32, new WeightStore(dir, null))) {
      assertEquals(8, r.numBlocks());
      try (Stream<Path> left = Files.list(dir)) {
        assertEquals(List.of(), left.toList());
      }
    }
  }

  @Test
  void aCacheEntryIsWrittenOnceAndServedFrom(@TempDir Path dir) throws IOException {
    WeightStore store = WeightStore.cache(dir, "checkpoint-1");
    float[] first;
    float[] second;
    try (LlamaWeights w = RandomLlama.create(TIED, 3)) {
      first = logits(w, store);
      Path entry = onlyEntry(dir);
      FileTime written = Files.getLastModifiedTime(entry);
      Files.setLastModifiedTime(entry, FileTime.fromMillis(written.toMillis() - 60_000));
      FileTime before = Files.getLastModifiedTime(entry);
      second = logits(w, store);
      assertEquals(entry, onlyEntry(dir));
      assertEquals(before, Files.getLastModifiedTime(entry), "the entry was written again");
    }
    assertArrayEquals(first, second);
    try (LlamaWeights w = RandomLlama.create(TIED, 3)) {
      OnnxModelRunner.create(w, BLOCK, 8, 1, Map.of(),
          QuantSpec.of(QuantMode.INT8).resolvedFor(TIED.hiddenSize()),
          dev.radixserve.model.graph.KvDtype.FLOAT32, store).close();
    }
    try (Stream<Path> entries = Files.list(dir)) {
      assertEquals(2, entries.count(), "int8 is an entry of its own");
    }
    assertNotEquals(WeightsFile.entryName(graph(), "checkpoint-1"),
        WeightsFile.entryName(graph(), "checkpoint-2"));
  }

  private static OnnxGraph graph() {
    try (LlamaWeights w = RandomLlama.create(TIED, 3)) {
      return w.graph().build(BLOCK, GraphDtype.FLOAT32, int4WithHead());
    }
  }

  private static float[] logits(LlamaWeights w, WeightStore store) {
    try (OnnxModelRunner r = OnnxModelRunner.create(w, BLOCK, 8, 1, Map.of(), int4WithHead(),
        dev.radixserve.model.graph.KvDtype.FLOAT32, store)) {
      return r.forward(new ForwardBatch(List.of(
          new ForwardBatch.Seq(new int[] {5, 17, 250, 3}, 0, new int[] {0}))))[0];
    }
  }

  private static Path onlyEntry(Path dir) throws IOException {
    try (Stream<Path> entries = Files.list(dir)) {
      List<Path> all = entries.toList();
      assertEquals(1, all.size(), all.toString());
      assertTrue(all.getFirst().getFileName().toString().endsWith(".weights"), all.toString());
      return all.getFirst();
    }
  }
}
