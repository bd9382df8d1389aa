package dev.radixserve.model.ort;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.onnx.proto.OnnxMl.GraphProto;
import ai.onnx.proto.OnnxMl.ModelProto;
import ai.onnx.proto.OnnxMl.NodeProto;
import ai.onnx.proto.OnnxMl.OperatorSetIdProto;
import ai.onnx.proto.OnnxMl.TensorProto;
import ai.onnx.proto.OnnxMl.TensorShapeProto;
import ai.onnx.proto.OnnxMl.TypeProto;
import ai.onnx.proto.OnnxMl.ValueInfoProto;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Calls every bound C API function at least once (a wrong struct index fails or crashes here). */
class OrtApiTest {

  @Test
  void versionIsTheBundledOne() {
    assertTrue(OrtApi.get().version().startsWith("1.29"), OrtApi.get().version());
  }

  @Test
  void statusBecomesExceptionWithMessage() {
    OrtException e = assertThrows(OrtException.class, () -> OrtApi.get().failWith(2, "bad thing"));
    assertEquals("ONNX Runtime error INVALID_ARGUMENT: bad thing", e.getMessage());
    assertEquals(2, e.code());
  }

  /** y = x + w, with w an initializer [2] = {10, 20}. */
  private static byte[] addModel() {
    TypeProto vec = TypeProto.newBuilder().setTensorType(TypeProto.Tensor.newBuilder()
        .setElemType(TensorProto.DataType.FLOAT_VALUE)
        .setShape(TensorShapeProto.newBuilder().addDim(
            TensorShapeProto.Dimension.newBuilder().setDimValue(2)))).build();
    GraphProto graph = GraphProto.newBuilder().setName("add")
        .addInput(ValueInfoProto.newBuilder().setName("x").setType(vec))
        .addOutput(ValueInfoProto.newBuilder().setName("y").setType(vec))
        .addInitializer(TensorProto.newBuilder().setName("w").setDataType(1).addDims(2)
            .addFloatData(10).addFloatData(20))
        .addNode(NodeProto.newBuilder().setOpType("Add").addInput("x").addInput("w").addOutput("y"))
        .build();
    return ModelProto.newBuilder().setIrVersion(8)
        .addOpsetImport(OperatorSetIdProto.newBuilder().setDomain("").setVersion(17))
        .setGraph(graph).build().toByteArray();
  }

  @Test
  void runsAModelAndReadsTheResult() {
    try (Arena arena = Arena.ofConfined();
        OrtEnv env = OrtEnv.create("test");
        MemoryInfo cpu = MemoryInfo.cpu();
        SessionOptions options = SessionOptions.create()) {
      options.intraOpThreads(1).interOpThreads(1).sequentialExecution()
          .optimization(SessionOptions.Optimization.ALL);
      MemorySegment x = arena.allocateFrom(ValueLayout.JAVA_FLOAT, 1f, 2f);
      try (OrtSession session = OrtSession.create(env, addModel(), options);
          OrtSession.Call call = session.call(List.of("x"), List.of("y"));
          OrtValue in = OrtValue.wrap(cpu, x, ElementType.FLOAT, 2)) {
        assertEquals(1, session.inputCount());
        assertEquals(1, session.outputCount());
        assertArrayEquals(new long[] {2}, in.shape());
        assertEquals(ElementType.FLOAT, in.elementType());
        OrtValue[] out = call.run(in);
        try (OrtValue y = out[0]) {
          assertArrayEquals(new float[] {11f, 22f}, y.data().toArray(ValueLayout.JAVA_FLOAT));
        }
      }
    }
  }

  @Test
  void addedInitializerReplacesTheModelsData() {
    try (Arena arena = Arena.ofConfined();
        OrtEnv env = OrtEnv.create("test");
        MemoryInfo cpu = MemoryInfo.device("Cpu", 0);
        OrtValue w = OrtValue.wrap(cpu, arena.allocateFrom(ValueLayout.JAVA_FLOAT, 100f, 200f),
            ElementType.FLOAT, 2);
        SessionOptions options = SessionOptions.create().addInitializer("w", w);
        OrtSession session = OrtSession.create(env, addModel(), options);
        OrtSession.Call call = session.call(List.of("x"), List.of("y"));
        OrtValue in = OrtValue.wrap(cpu, arena.allocateFrom(ValueLayout.JAVA_FLOAT, 1f, 2f),
            ElementType.FLOAT, 2)) {
      try (OrtValue y = call.run(in)[0]) {
        assertArrayEquals(new float[] {101f, 202f}, y.data().toArray(ValueLayout.JAVA_FLOAT));
      }
    }
  }

  @Test
  void externalInitializersComeFromCallerValues() {
    TypeProto vec = TypeProto.newBuilder().setTensorType(TypeProto.Tensor.newBuilder()
        .setElemType(TensorProto.DataType.FLOAT_VALUE)
        .setShape(TensorShapeProto.newBuilder().addDim(
            TensorShapeProto.Dimension.newBuilder().setDimValue(2)))).build();
    TensorProto w = TensorProto.newBuilder().setName("w").setDataType(1).addDims(2)
        .setDataLocation(TensorProto.DataLocation.EXTERNAL)
        .addExternalData(ai.onnx.proto.OnnxMl.StringStringEntryProto.newBuilder()
            .setKey("location").setValue("radixserve-memory"))
        .addExternalData(ai.onnx.proto.OnnxMl.StringStringEntryProto.newBuilder()
            .setKey("offset").setValue("0"))
        .addExternalData(ai.onnx.proto.OnnxMl.StringStringEntryProto.newBuilder()
            .setKey("length").setValue("8"))
        .build();
    GraphProto graph = GraphProto.newBuilder().setName("add")
        .addInput(ValueInfoProto.newBuilder().setName("x").setType(vec))
        .addOutput(ValueInfoProto.newBuilder().setName("y").setType(vec))
        .addInitializer(w)
        .addNode(NodeProto.newBuilder().setOpType("Add").addInput("x").addInput("w").addOutput("y"))
        .build();
    byte[] model = ModelProto.newBuilder().setIrVersion(8)
        .addOpsetImport(OperatorSetIdProto.newBuilder().setDomain("").setVersion(17))
        .setGraph(graph).build().toByteArray();
    try (Arena arena = Arena.ofConfined();
        OrtEnv env = OrtEnv.create("test");
        MemoryInfo cpu = MemoryInfo.cpu()) {
      MemorySegment wData = arena.allocateFrom(ValueLayout.JAVA_FLOAT, 100f, 200f);
      OrtSession session;
      try (OrtValue wValue = OrtValue.wrap(cpu, wData, ElementType.FLOAT, 2);
          SessionOptions options = SessionOptions.create()) {
        options.addExternalInitializers(List.of("w"), List.of(wValue));
        session = OrtSession.create(env, model, options);
      }
      wData.setAtIndex(ValueLayout.JAVA_FLOAT, 0, 1000f); // too late: the session has its copy
      try (session;
          OrtSession.Call call = session.call(List.of("x"), List.of("y"));
          OrtValue in = OrtValue.wrap(cpu, arena.allocateFrom(ValueLayout.JAVA_FLOAT, 1f, 2f),
              ElementType.FLOAT, 2);
          OrtValue y = call.run(in)[0]) {
        // taken from the caller's value when the session was made (ONNX Runtime copies it)
        assertArrayEquals(new float[] {101f, 202f}, y.data().toArray(ValueLayout.JAVA_FLOAT));
      }
    }
  }

  @Test
  void badModelAndBadRunReportOrtMessages() {
    try (OrtEnv env = OrtEnv.create("test"); SessionOptions options = SessionOptions.create()) {
      OrtException bad = assertThrows(OrtException.class,
          () -> OrtSession.create(env, new byte[] {1, 2, 3}, options));
      assertTrue(bad.getMessage().startsWith("ONNX Runtime error"), bad.getMessage());
      try (Arena arena = Arena.ofConfined(); MemoryInfo cpu = MemoryInfo.cpu();
          OrtSession session = OrtSession.create(env, addModel(), options);
          OrtSession.Call call = session.call(List.of("x"), List.of("y"));
          OrtValue wrongShape = OrtValue.wrap(cpu, arena.allocate(12), ElementType.FLOAT, 3)) {
        assertThrows(OrtException.class, () -> call.run(wrongShape));
      }
    }
  }

  @Test
  void handlesCloseOnceAndFailAfterwards() {
    MemoryInfo cpu = MemoryInfo.cpu();
    cpu.close();
    cpu.close();
    try (Arena arena = Arena.ofConfined()) {
      IllegalStateException e = assertThrows(IllegalStateException.class,
          () -> OrtValue.wrap(cpu, arena.allocate(4), ElementType.FLOAT, 1));
      assertEquals("OrtMemoryInfo is closed", e.getMessage());
    }
  }

  @Test
  void wrapChecksSizeAndMemoryKind() {
    try (MemoryInfo cpu = MemoryInfo.cpu(); Arena arena = Arena.ofConfined()) {
      assertThrows(IllegalArgumentException.class,
          () -> OrtValue.wrap(cpu, arena.allocate(8), ElementType.FLOAT, 3));
      assertThrows(IllegalArgumentException.class,
          () -> OrtValue.wrap(cpu, MemorySegment.ofArray(new float[2]), ElementType.FLOAT, 2));
    }
  }
}
