package dev.radixserve.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.onnx.proto.OnnxMl.ModelProto;
import ai.onnx.proto.OnnxMl.NodeProto;
import ai.onnx.proto.OnnxMl.TensorProto;
import dev.radixserve.model.graph.ExternalInitializer;
import dev.radixserve.model.graph.GraphDtype;
import dev.radixserve.model.graph.OnnxGraph;
import dev.radixserve.model.graph.PagedLlamaGraph;
import dev.radixserve.model.graph.WeightSource;
import dev.radixserve.model.quant.QuantSpec;
import dev.radixserve.model.weights.LlamaWeights;
import dev.radixserve.model.weights.RandomLlama;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The rotary cos/sin tables lie in the weights file ({@link WeightSource.Table}), not inline in
 * the graph: ONNX Runtime then maps them and a server holds only the pages of the positions it
 * read, where an inline constant was copied into the session whole (32 MiB on Llama-3.2-1B, and
 * four copies of it on the heap while loading; docs/benchmarks/journal/2026-11-30h-int4-blocks-128.md).
 */
class RotaryTablesTest {

  /** 4,096 positions, heads of 16: tables of [4096, 8], larger than the graph itself. */
  private static final LlamaConfig C = LlamaConfig.llama(2, 64, 4, 2, 128, 4096, 260);

  @Test
  void theTablesAreWeightsFileInitializersHoldingHuggingFacesValues() throws Exception {
    OnnxGraph graph = new PagedLlamaGraph(C).build(16,
        GraphDtype.FLOAT32, QuantSpec.none());
    ModelProto model = ModelProto.parseFrom(graph.model());
    for (TensorProto t : model.getGraph().getInitializerList()) {
      assertTrue(t.getDataLocation() == TensorProto.DataLocation.EXTERNAL
          || t.getFloatDataCount() < 64 * 8, "no table inline: " + t.getName());
    }
    Map<String, ExternalInitializer> byName = new HashMap<>();
    graph.initializers().forEach(i -> byName.put(i.name(), i));
    List<NodeProto> rotary = model.getGraph().getNodeList().stream()
        .filter(n -> n.getOpType().equals("RotaryEmbedding")).toList();
    assertEquals(2 * C.nLayer(), rotary.size(), "q and k of each layer");
    String cosName = rotary.getFirst().getInput(2);
    String sinName = rotary.getFirst().getInput(3);
    for (NodeProto n : rotary) {
      assertEquals(List.of(cosName, sinName), List.of(n.getInput(2), n.getInput(3)),
          "one pair of tables for the one rope");
    }
    float[] cos = table(byName.get(cosName));
    float[] sin = table(byName.get(sinName));
    int half = C.headDim() / 2;
    for (int p : new int[] {0, 1, 17, 63}) {
      for (int i = 0; i < half; i++) {
        // transformers: inv_freq = 1 / theta^(2i/D) in fp32, the angle p * inv_freq in fp32
        float inv = (float) (1.0 / Math.pow(10000, 2.0 * i / C.headDim()));
        float angle = (float) p * inv;
        assertEquals((float) Math.cos(angle), cos[p * half + i], 1e-7f, "cos " + p + "," + i);
        assertEquals((float) Math.sin(angle), sin[p * half + i], 1e-7f, "sin " + p + "," + i);
      }
    }
    assertTrue(!((WeightSource.Table) byName.get(cosName).source()).digest()
        .equals(((WeightSource.Table) byName.get(sinName).source()).digest()));
  }

  /** What the weights file receives for the initializer: the table's values, written out. */
  private static float[] table(ExternalInitializer init) {
    assertTrue(init.source() instanceof WeightSource.Table, init.name() + ": " + init.source());
    assertEquals(List.of((long) C.nPositions(), (long) C.headDim() / 2),
        Arrays.stream(init.dims()).boxed().toList());
    float[][] out = new float[1][];
    WeightTensors.forEach(Map.of(), List.of(init), (i, data) ->
        out[0] = data.toArray(ValueLayout.JAVA_FLOAT));
    return out[0];
  }

  /**
   * The memory plan counts the tables as read by row (resident only where read) and no longer as
   * the graph's constants: resident = every initializer but the embedding table and the tables.
   */
  @Test
  void thePlanCountsTheTablesAsReadByRow() {
    try (LlamaWeights w = RandomLlama.create(C, 1)) {
      OnnxGraph graph = w.graph().build(16, GraphDtype.FLOAT32, QuantSpec.none());
      long tables = 0;
      long others = 0;
      for (ExternalInitializer i : graph.initializers()) {
        if (i.source() instanceof WeightSource.Table) {
          tables += WeightsFile.bytes(i);
        } else if (!i.name().contains("embed_tokens")) {
          others += WeightsFile.bytes(i);
        }
      }
      assertEquals(2L * C.nPositions() * (C.headDim() / 2) * Float.BYTES, tables);
      MemoryPlan plan = MemoryPlan.of(w, 16, 8, QuantSpec.none());
      assertEquals(others, plan.residentBytes());
      assertTrue(plan.graphBytes() < tables, "the graph no longer carries them: "
          + plan.graphBytes());
    }
  }
}
