package dev.radixserve.model.attention;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.onnx.proto.OnnxMl.AttributeProto;
import ai.onnx.proto.OnnxMl.GraphProto;
import ai.onnx.proto.OnnxMl.ModelProto;
import ai.onnx.proto.OnnxMl.NodeProto;
import ai.onnx.proto.OnnxMl.OperatorSetIdProto;
import ai.onnx.proto.OnnxMl.TensorProto;
import ai.onnx.proto.OnnxMl.TensorShapeProto;
import ai.onnx.proto.OnnxMl.TypeProto;
import ai.onnx.proto.OnnxMl.ValueInfoProto;
import dev.radixserve.model.ort.ElementType;
import dev.radixserve.model.ort.MemoryInfo;
import dev.radixserve.model.ort.OrtEnv;
import dev.radixserve.model.ort.OrtException;
import dev.radixserve.model.ort.OrtSession;
import dev.radixserve.model.ort.OrtValue;
import dev.radixserve.model.ort.SessionOptions;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The kernel as ONNX Runtime runs it: a one-node graph with {@code com.microsoft.PagedAttention},
 * the caches bound in place, work spread over ONNX Runtime's own thread pool.
 */
class PagedAttentionOpTest {

  static final List<String> INPUTS = List.of("query", "key", "value", "key_cache", "value_cache",
      "cumulative_sequence_length", "past_seqlens", "block_table");
  static final List<String> OUTPUTS = List.of("output", "key_cache_out", "value_cache_out");

  private static ValueInfoProto info(String name, int type, Object... dims) {
    TensorShapeProto.Builder shape = TensorShapeProto.newBuilder();
    for (Object d : dims) {
      shape.addDim(d instanceof Number n
          ? TensorShapeProto.Dimension.newBuilder().setDimValue(n.longValue())
          : TensorShapeProto.Dimension.newBuilder().setDimParam(d.toString()));
    }
    return ValueInfoProto.newBuilder().setName(name).setType(TypeProto.newBuilder()
        .setTensorType(TypeProto.Tensor.newBuilder().setElemType(type).setShape(shape))).build();
  }

  private static AttributeProto attr(String name, long v) {
    return AttributeProto.newBuilder().setName(name).setType(AttributeProto.AttributeType.INT)
        .setI(v).build();
  }

  private static AttributeProto attr(String name, float v) {
    return AttributeProto.newBuilder().setName(name).setType(AttributeProto.AttributeType.FLOAT)
        .setF(v).build();
  }

  static byte[] model(int heads, int kvHeads, int headSize, int blockSize) {
    return model(TensorProto.DataType.FLOAT_VALUE, heads, kvHeads, headSize, blockSize);
  }

  /** The one-node graph with activations and caches of ONNX type {@code f}, more attributes. */
  static byte[] model(int f, int heads, int kvHeads, int headSize, int blockSize,
      AttributeProto... more) {
    int i32 = TensorProto.DataType.INT32_VALUE;
    GraphProto.Builder g = GraphProto.newBuilder().setName("paged_attention")
        .addInput(info("query", f, "T", heads * headSize))
        .addInput(info("key", f, "T", kvHeads * headSize))
        .addInput(info("value", f, "T", kvHeads * headSize))
        .addInput(info("key_cache", f, "N", blockSize, kvHeads, headSize))
        .addInput(info("value_cache", f, "N", blockSize, kvHeads, headSize))
        .addInput(info("cumulative_sequence_length", i32, "S1"))
        .addInput(info("past_seqlens", i32, "S"))
        .addInput(info("block_table", i32, "S", "M"))
        .addOutput(info("output", f, "T", heads * headSize))
        .addOutput(info("key_cache_out", f, "N", blockSize, kvHeads, headSize))
        .addOutput(info("value_cache_out", f, "N", blockSize, kvHeads, headSize))
        .addNode(NodeProto.newBuilder().setOpType("PagedAttention").setDomain("com.microsoft")
            .setName("attn").addAllInput(INPUTS).addAllOutput(OUTPUTS)
            .addAttribute(attr("num_heads", heads)).addAttribute(attr("kv_num_heads", kvHeads))
            .addAllAttribute(List.of(more)));
    return ModelProto.newBuilder().setIrVersion(8)
        .addOpsetImport(OperatorSetIdProto.newBuilder().setDomain("").setVersion(17))
        .addOpsetImport(OperatorSetIdProto.newBuilder().setDomain("com.microsoft").setVersion(1))
        .setGraph(g).build().toByteArray();
  }

  /** Tensors over the case's memory, in {@link #INPUTS} order. */
  static OrtValue[] inputs(AttentionCase c, MemoryInfo cpu, Arena arena, int[] past, int[] table) {
    long kv = (long) c.kvHeads * c.headSize;
    return new OrtValue[] {
        OrtValue.wrap(cpu, c.query, ElementType.FLOAT, c.tokens, (long) c.heads * c.headSize),
        OrtValue.wrap(cpu, c.key, ElementType.FLOAT, c.tokens, kv),
        OrtValue.wrap(cpu, c.value, ElementType.FLOAT, c.tokens, kv),
        OrtValue.wrap(cpu, c.keyCache, ElementType.FLOAT, c.numBlocks, c.blockSize, c.kvHeads,
            c.headSize),
        OrtValue.wrap(cpu, c.valueCache, ElementType.FLOAT, c.numBlocks, c.blockSize, c.kvHeads,
            c.headSize),
        OrtValue.wrap(cpu, arena.allocateFrom(ValueLayout.JAVA_INT, c.cu), ElementType.INT32,
            c.cu.length),
        OrtValue.wrap(cpu, arena.allocateFrom(ValueLayout.JAVA_INT, past), ElementType.INT32,
            past.length),
        OrtValue.wrap(cpu, arena.allocateFrom(ValueLayout.JAVA_INT, table), ElementType.INT32,
            past.length, c.maxBlocks),
    };
  }

  @Test
  void runsInsideOnnxRuntimeInPlaceOverItsThreadPool() {
    try (Arena arena = Arena.ofShared();
        OrtEnv env = OrtEnv.create("test");
        MemoryInfo cpu = MemoryInfo.cpu();
        SessionOptions options = SessionOptions.create()) {
      options.intraOpThreads(2).addCustomOpDomain(PagedAttentionOp.domain());
      AttentionCase c = new AttentionCase(arena, 3, 4, 2, 64, 16, 48,
          PagedAttentionKernelTest.MIXED);
      float[] keysBefore = PagedAttentionKernelTest.floats(c.keyCache);
      float[] valuesBefore = PagedAttentionKernelTest.floats(c.valueCache);
      double[][] expected = c.expected(keysBefore, valuesBefore);
      try (OrtSession session = OrtSession.create(env, model(4, 2, 64, 16), options);
          OrtSession.Call call = session.call(INPUTS, OUTPUTS)) {
        OrtValue[] in = inputs(c, cpu, arena, c.past, c.tables);
        OrtValue[] out = call.run(in, new OrtValue[] {null, in[3], in[4]});
        try (OrtValue result = out[0]) {
          assertNull(out[1]);
          MemorySegment.copy(result.data(), 0, c.output, 0, c.output.byteSize());
        } finally {
          closeAll(in);
        }
        double error = c.maxError(expected);
        assertTrue(error < 1e-4, "max error " + error);
        PagedAttentionKernelTest.assertOnlyNewSlotsChanged(c, keysBefore,
            PagedAttentionKernelTest.floats(c.keyCache), c.key);
        PagedAttentionKernelTest.assertOnlyNewSlotsChanged(c, valuesBefore,
            PagedAttentionKernelTest.floats(c.valueCache), c.value);
      }
    }
  }

  @Test
  void badInputsFailTheRunWithTheKernelsMessageAndTheSessionKeepsServing() {
    try (Arena arena = Arena.ofShared();
        OrtEnv env = OrtEnv.create("test");
        MemoryInfo cpu = MemoryInfo.cpu();
        SessionOptions options = SessionOptions.create()) {
      options.intraOpThreads(1).addCustomOpDomain(PagedAttentionOp.domain());
      AttentionCase c = new AttentionCase(arena, 4, 4, 4, 64, 16, 48,
          PagedAttentionKernelTest.MIXED);
      float[] before = PagedAttentionKernelTest.floats(c.keyCache);
      try (OrtSession session = OrtSession.create(env, model(4, 4, 64, 16), options);
          OrtSession.Call call = session.call(INPUTS, OUTPUTS)) {
        int[] badTable = c.tables.clone();
        badTable[2] = 99;
        OrtValue[] bad = inputs(c, cpu, arena, c.past, badTable);
        OrtException e = assertThrows(OrtException.class,
            () -> call.run(bad, new OrtValue[] {null, bad[3], bad[4]}));
        assertTrue(e.getMessage().contains(
            "PagedAttention: sequence 0: block id 99 at table index 2 outside [0, 48)"),
            e.getMessage());
        assertEquals(2, e.code()); // INVALID_ARGUMENT
        // the caches must be bound in place: a fresh output buffer is refused, not copied into
        OrtException notInPlace = assertThrows(OrtException.class, () -> call.run(bad));
        assertTrue(notInPlace.getMessage().contains("key_cache_out must be bound to the key_cache"
            + " buffer"), notInPlace.getMessage());
        closeAll(bad);
        assertEquals(before.length, PagedAttentionKernelTest.floats(c.keyCache).length);
        org.junit.jupiter.api.Assertions.assertArrayEquals(before,
            PagedAttentionKernelTest.floats(c.keyCache));
        OrtValue[] good = inputs(c, cpu, arena, c.past, c.tables);
        OrtValue[] out = call.run(good, new OrtValue[] {null, good[3], good[4]});
        out[0].close();
        closeAll(good);
      }
    }
  }

  /**
   * local_window_size and softcap as node attributes, parsed by ONNX Runtime and handed to the
   * kernel: the fp32 op and the fp16 one against the float64 reference (Hugging Face's window W
   * is the attribute as it is).
   */
  @Test
  void windowAndSoftcapAttributesReachBothKernels() {
    int window = 20;
    float softcap = 5f;
    AttributeProto[] attrs = {attr("local_window_size", window), attr("softcap", softcap)};
    try (Arena arena = Arena.ofShared();
        OrtEnv env = OrtEnv.create("test");
        MemoryInfo cpu = MemoryInfo.cpu();
        SessionOptions options = SessionOptions.create()) {
      options.intraOpThreads(2).addCustomOpDomain(PagedAttentionOp.domain());
      AttentionCase c = new AttentionCase(arena, 8, 4, 2, 64, 16, 48,
          PagedAttentionKernelTest.MIXED);
      double[][] expected = c.expected(PagedAttentionKernelTest.floats(c.keyCache),
          PagedAttentionKernelTest.floats(c.valueCache), window, softcap);
      try (OrtSession session = OrtSession.create(env,
          model(TensorProto.DataType.FLOAT_VALUE, 4, 2, 64, 16, attrs), options);
          OrtSession.Call call = session.call(INPUTS, OUTPUTS)) {
        OrtValue[] in = inputs(c, cpu, arena, c.past, c.tables);
        OrtValue[] out = call.run(in, new OrtValue[] {null, in[3], in[4]});
        try (OrtValue result = out[0]) {
          MemorySegment.copy(result.data(), 0, c.output, 0, c.output.byteSize());
        } finally {
          closeAll(in);
        }
        double error = c.maxError(expected);
        assertTrue(error < 1e-4, "fp32 max error " + error);
      }

      AttentionCase h = new AttentionCase(arena, 9, 4, 2, 64, 16, 48,
          PagedAttentionKernelTest.MIXED);
      Half half = new Half(h, arena); // rounds h's tensors to fp16 values first
      double[][] halfExpected = h.expected(PagedAttentionKernelTest.floats(h.keyCache),
          PagedAttentionKernelTest.floats(h.valueCache), window, softcap);
      try (OrtSession session = OrtSession.create(env,
          model(TensorProto.DataType.FLOAT16_VALUE, 4, 2, 64, 16, attrs), options);
          OrtSession.Call call = session.call(INPUTS, OUTPUTS)) {
        OrtValue[] in = half.inputs(cpu);
        OrtValue[] out = call.run(in, new OrtValue[] {null, in[3], in[4]});
        try (OrtValue result = out[0]) {
          for (long i = 0; i < (long) h.tokens * h.heads * h.headSize; i++) {
            h.output.setAtIndex(ValueLayout.JAVA_FLOAT, i, Float.float16ToFloat(
                result.data().getAtIndex(ValueLayout.JAVA_SHORT, i)));
          }
        } finally {
          closeAll(in);
        }
        // the output row is rounded to fp16: half an ulp at 4 is 2^-9
        double error = h.maxError(halfExpected);
        assertTrue(error < 4e-3, "fp16 max error " + error);
      }
    }
  }

  /** The case's tensors as fp16, the case's own floats rounded to the same values. */
  private static final class Half {
    private final AttentionCase c;
    private final Arena arena;
    private final MemorySegment[] tensors;

    Half(AttentionCase c, Arena arena) {
      this.c = c;
      this.arena = arena;
      tensors = new MemorySegment[] {half(c.query), half(c.key), half(c.value),
          half(c.keyCache), half(c.valueCache)};
    }

    private MemorySegment half(MemorySegment floats) {
      long n = floats.byteSize() / Float.BYTES;
      MemorySegment out = arena.allocate(Math.max(1, n) * 2, 64).asSlice(0, n * 2);
      for (long i = 0; i < n; i++) {
        short bits = Float.floatToFloat16(floats.getAtIndex(ValueLayout.JAVA_FLOAT, i));
        out.setAtIndex(ValueLayout.JAVA_SHORT, i, bits);
        floats.setAtIndex(ValueLayout.JAVA_FLOAT, i, Float.float16ToFloat(bits));
      }
      return out;
    }

    OrtValue[] inputs(MemoryInfo cpu) {
      long kv = (long) c.kvHeads * c.headSize;
      ElementType h = ElementType.FLOAT16;
      return new OrtValue[] {
          OrtValue.wrap(cpu, tensors[0], h, c.tokens, (long) c.heads * c.headSize),
          OrtValue.wrap(cpu, tensors[1], h, c.tokens, kv),
          OrtValue.wrap(cpu, tensors[2], h, c.tokens, kv),
          OrtValue.wrap(cpu, tensors[3], h, c.numBlocks, c.blockSize, c.kvHeads, c.headSize),
          OrtValue.wrap(cpu, tensors[4], h, c.numBlocks, c.blockSize, c.kvHeads, c.headSize),
          OrtValue.wrap(cpu, arena.allocateFrom(ValueLayout.JAVA_INT, c.cu), ElementType.INT32,
              c.cu.length),
          OrtValue.wrap(cpu, arena.allocateFrom(ValueLayout.JAVA_INT, c.past), ElementType.INT32,
              c.past.length),
          OrtValue.wrap(cpu, arena.allocateFrom(ValueLayout.JAVA_INT, c.tables),
              ElementType.INT32, c.past.length, c.maxBlocks),
      };
    }
  }

  @Test
  void aWindowOfZeroIsRefusedWhenTheSessionIsMade() {
    try (OrtEnv env = OrtEnv.create("test");
        SessionOptions options = SessionOptions.create()) {
      options.intraOpThreads(1).addCustomOpDomain(PagedAttentionOp.domain());
      OrtException e = assertThrows(OrtException.class, () -> OrtSession.create(env,
          model(TensorProto.DataType.FLOAT_VALUE, 4, 4, 64, 16, attr("local_window_size", 0)),
          options).close());
      assertTrue(e.getMessage().contains("local_window_size must be -1 (none) or in [1, "),
          e.getMessage());
    }
  }

  private static void closeAll(OrtValue[] values) {
    for (OrtValue v : values) {
      v.close();
    }
  }
}
