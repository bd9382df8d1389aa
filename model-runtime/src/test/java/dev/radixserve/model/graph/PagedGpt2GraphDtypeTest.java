package dev.radixserve.model.graph;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.onnx.proto.OnnxMl.GraphProto;
import ai.onnx.proto.OnnxMl.ModelProto;
import ai.onnx.proto.OnnxMl.NodeProto;
import ai.onnx.proto.OnnxMl.TensorProto;
import ai.onnx.proto.OnnxMl.ValueInfoProto;
import dev.radixserve.model.ModelConfig;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The graph's types in each dtype, as ONNX Runtime's CUDA PagedAttention kernel (fp16/bf16,
 * caches of the same type, int32 lengths, attention_metadata int32 [2] at input 16) requires.
 */
class PagedGpt2GraphDtypeTest {

  static final ModelConfig GPT2_SMALL_SHAPE = new ModelConfig(2, 12, 768, 1024, 50257, 1e-5,
      "gelu_new");

  static ModelProto build(GraphDtype dtype) throws Exception {
    return ModelProto.parseFrom(new PagedGpt2Graph(GPT2_SMALL_SHAPE).build(16, dtype).model());
  }

  static Map<String, Integer> types(List<ValueInfoProto> values) {
    Map<String, Integer> types = new HashMap<>();
    for (ValueInfoProto v : values) {
      types.put(v.getName(), v.getType().getTensorType().getElemType());
    }
    return types;
  }

  @ParameterizedTest
  @EnumSource(GraphDtype.class)
  void inputsOutputsAndWeightsAreOfTheDtype(GraphDtype dtype) throws Exception {
    GraphProto g = build(dtype).getGraph();
    Map<String, Integer> in = types(g.getInputList());
    Map<String, Integer> out = types(g.getOutputList());
    int f = dtype.onnxType();
    for (int i = 0; i < GPT2_SMALL_SHAPE.nLayer(); i++) {
      assertEquals(f, in.get(PagedGraph.keyCache(i)));
      assertEquals(f, in.get(PagedGraph.valueCache(i)));
      assertEquals(f, out.get(PagedGraph.keyCacheOut(i)));
      assertEquals(f, out.get(PagedGraph.valueCacheOut(i)));
    }
    assertEquals(TensorProto.DataType.FLOAT_VALUE, out.get(PagedGpt2Graph.LOGITS),
        "logits leave as fp32");
    assertEquals(TensorProto.DataType.INT32_VALUE, in.get(PagedGpt2Graph.ATTENTION_METADATA));
    for (String name : List.of(PagedGpt2Graph.BLOCK_TABLES, PagedGpt2Graph.CU_SEQLENS,
        PagedGpt2Graph.PAST_LENS)) {
      assertEquals(TensorProto.DataType.INT32_VALUE, in.get(name), name);
    }
    Set<Integer> floats = Set.of(TensorProto.DataType.FLOAT_VALUE,
        TensorProto.DataType.FLOAT16_VALUE, TensorProto.DataType.BFLOAT16_VALUE);
    for (TensorProto t : g.getInitializerList()) {
      if (floats.contains(t.getDataType())) {
        assertEquals(f, t.getDataType(), "initializer " + t.getName());
      }
    }
    long casts = g.getNodeList().stream().filter(n -> n.getOpType().equals("Cast")).count();
    assertEquals(dtype == GraphDtype.FLOAT32 ? 0 : 1, casts, "one cast, at the logits");
  }

  @ParameterizedTest
  @EnumSource(GraphDtype.class)
  void everyAttentionNodeHasOrtsSignature(GraphDtype dtype) throws Exception {
    List<NodeProto> attention = build(dtype).getGraph().getNodeList().stream()
        .filter(n -> n.getOpType().equals("PagedAttention")).toList();
    assertEquals(GPT2_SMALL_SHAPE.nLayer(), attention.size());
    for (NodeProto n : attention) {
      assertEquals("com.microsoft", n.getDomain());
      assertEquals(17, n.getInputCount());
      assertEquals(PagedGpt2Graph.ATTENTION_METADATA, n.getInput(16));
      for (int i = 8; i < 16; i++) {
        assertTrue(n.getInput(i).isEmpty(), "optional input " + i + " absent");
      }
      assertEquals(3, n.getOutputCount());
      assertEquals(n.getInput(3).replace("key_cache_", "key_cache_out_"), n.getOutput(1));
      assertEquals(n.getInput(4).replace("value_cache_", "value_cache_out_"), n.getOutput(2));
    }
  }

  @ParameterizedTest
  @EnumSource(GraphDtype.class)
  void roundingIsToNearestEven(GraphDtype dtype) {
    java.lang.foreign.MemorySegment m = java.lang.foreign.MemorySegment.ofArray(new float[4]);
    for (float v : new float[] {0f, 1f, -2.5f, 65504f, 1e-3f, (float) Math.PI}) {
      dtype.store(m, 0, v);
      assertEquals(dtype.round(v), dtype.load(m, 0), dtype + " " + v);
    }
    // 1 + 2^-8 lies halfway between two bf16 values: ties go to the even one (1.0)
    assertEquals(dtype == GraphDtype.BFLOAT16 ? 1f : 1f + 0x1p-8f, dtype.round(1f + 0x1p-8f));
    assertTrue(Float.isNaN(dtype.round(Float.NaN)));
  }
}
