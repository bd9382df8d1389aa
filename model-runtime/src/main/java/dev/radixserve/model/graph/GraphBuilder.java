package dev.radixserve.model.graph;

import ai.onnx.proto.OnnxMl.AttributeProto;
import ai.onnx.proto.OnnxMl.GraphProto;
import ai.onnx.proto.OnnxMl.ModelProto;
import ai.onnx.proto.OnnxMl.NodeProto;
import ai.onnx.proto.OnnxMl.OperatorSetIdProto;
import ai.onnx.proto.OnnxMl.StringStringEntryProto;
import ai.onnx.proto.OnnxMl.TensorProto;
import ai.onnx.proto.OnnxMl.TensorShapeProto;
import ai.onnx.proto.OnnxMl.TypeProto;
import ai.onnx.proto.OnnxMl.ValueInfoProto;
import dev.radixserve.model.ort.ElementType;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A thin writer of ONNX graphs over the {@code OnnxMl} protobuf classes: declares inputs and
 * outputs, adds nodes under fresh value names, and holds small constants as initializers.
 */
final class GraphBuilder {

  static final int FLOAT = TensorProto.DataType.FLOAT_VALUE;
  static final int INT32 = TensorProto.DataType.INT32_VALUE;
  static final int INT64 = TensorProto.DataType.INT64_VALUE;
  static final int UINT8 = TensorProto.DataType.UINT8_VALUE;

  private final GraphProto.Builder graph;
  private final Map<String, ExternalInitializer> externals = new LinkedHashMap<>();
  private final Map<String, Offered> offered = new LinkedHashMap<>();

  /** A checkpoint tensor the graph may read, in the graph's float type. */
  private record Offered(long[] dims, int elemType) {}
  private int counter;

  GraphBuilder(String name) {
    graph = GraphProto.newBuilder().setName(name);
  }

  /**
   * Declares a graph input.
   *
   * @param dims each a number (fixed) or a name (symbolic)
   */
  String input(String name, int elemType, Object... dims) {
    graph.addInput(valueInfo(name, elemType, dims));
    return name;
  }

  /** Declares an existing value (named by a {@link #node}) a graph output, as it is. */
  void declareOutput(String name, int elemType, Object... dims) {
    graph.addOutput(valueInfo(name, elemType, dims));
  }

  /**
   * Offers checkpoint tensors (name → shape) as fp32 weights: each becomes an external
   * initializer if, and only if, a node reads it when the graph is {@link #finish}ed. A family
   * offers all its weights up front; a linear layer that is quantized reads its weight in
   * another form, so the fp32 one is never declared, converted or handed to the session.
   */
  void offer(Map<String, long[]> weights, int elemType) {
    weights.forEach((name, dims) -> offered.putIfAbsent(name, new Offered(dims.clone(), elemType)));
  }

  /** Offers one checkpoint tensor as fp32 unless already offered (see {@link #offer}). */
  String weight(String name, long... dims) {
    offered.putIfAbsent(name, new Offered(dims.clone(), FLOAT));
    return name;
  }

  /**
   * Declares an initializer whose data the model does not hold: an external-data reference
   * that the runner points into the weights file it writes from {@code source}
   * ({@code WeightsFile}).
   */
  void externalInitializer(String name, int elemType, long[] dims, WeightSource source) {
    if (externals.putIfAbsent(name, new ExternalInitializer(name, elemType, dims, source)) != null) {
      throw new IllegalStateException("initializer " + name + " declared twice");
    }
    long bytes = ElementType.ofCode(elemType).bytes();
    for (long d : dims) {
      bytes *= d;
    }
    TensorProto.Builder t = TensorProto.newBuilder().setName(name).setDataType(elemType)
        .setDataLocation(TensorProto.DataLocation.EXTERNAL)
        .addExternalData(entry("location", "radixserve-weights"))
        .addExternalData(entry("offset", "0"))
        .addExternalData(entry("length", Long.toString(bytes)));
    for (long d : dims) {
      t.addDims(d);
    }
    graph.addInitializer(t);
  }

  private static StringStringEntryProto entry(String key, String value) {
    return StringStringEntryProto.newBuilder().setKey(key).setValue(value).build();
  }

  private static ValueInfoProto valueInfo(String name, int elemType, Object... dims) {
    TensorShapeProto.Builder shape = TensorShapeProto.newBuilder();
    for (Object d : dims) {
      TensorShapeProto.Dimension.Builder dim = TensorShapeProto.Dimension.newBuilder();
      if (d instanceof Number n) {
        dim.setDimValue(n.longValue());
      } else {
        dim.setDimParam(d.toString());
      }
      shape.addDim(dim);
    }
    TypeProto type = TypeProto.newBuilder().setTensorType(
        TypeProto.Tensor.newBuilder().setElemType(elemType).setShape(shape)).build();
    return ValueInfoProto.newBuilder().setName(name).setType(type).build();
  }

  /** A fresh value name after {@code hint}. */
  String fresh(String hint) {
    return hint + "_" + (counter++);
  }

  /** Adds one node with a single fresh output (named after {@code hint}) and returns that name. */
  String op(String opType, String hint, List<String> inputs, AttributeProto... attributes) {
    String out = hint + "_" + (counter++);
    NodeProto.Builder node = NodeProto.newBuilder().setOpType(opType).setName(out + "/" + opType)
        .addAllInput(inputs).addOutput(out);
    for (AttributeProto a : attributes) {
      node.addAttribute(a);
    }
    graph.addNode(node);
    return out;
  }

  String op(String opType, String hint, String... inputs) {
    return op(opType, hint, List.of(inputs));
  }

  /**
   * Adds a node of {@code domain} whose outputs get exactly the given names (graph outputs bound
   * by the caller need their own names, with no Identity copy in between).
   */
  void node(String opType, String domain, String name, List<String> inputs, List<String> outputs,
      AttributeProto... attributes) {
    NodeProto.Builder node = NodeProto.newBuilder().setOpType(opType).setDomain(domain)
        .setName(name).addAllInput(inputs).addAllOutput(outputs);
    for (AttributeProto a : attributes) {
      node.addAttribute(a);
    }
    graph.addNode(node);
  }

  /** Adds a node with several fresh outputs. */
  String[] ops(String opType, String hint, int outputs, List<String> inputs,
      AttributeProto... attributes) {
    String base = hint + "_" + (counter++);
    NodeProto.Builder node = NodeProto.newBuilder().setOpType(opType).setName(base + "/" + opType)
        .addAllInput(inputs);
    String[] names = new String[outputs];
    for (int i = 0; i < outputs; i++) {
      names[i] = base + "_" + i;
      node.addOutput(names[i]);
    }
    for (AttributeProto a : attributes) {
      node.addAttribute(a);
    }
    graph.addNode(node);
    return names;
  }

  /** A 1-D int64 constant. */
  String ints(long... values) {
    String name = "c" + (counter++);
    TensorProto.Builder t = TensorProto.newBuilder().setName(name).setDataType(INT64)
        .addDims(values.length);
    for (long v : values) {
      t.addInt64Data(v);
    }
    graph.addInitializer(t);
    return name;
  }

  /** A scalar int64 constant. */
  String scalarInt(long value) {
    String name = "c" + (counter++);
    graph.addInitializer(TensorProto.newBuilder().setName(name).setDataType(INT64)
        .addInt64Data(value));
    return name;
  }

  /** A scalar float constant. */
  String scalar(float value) {
    return scalar(value, GraphDtype.FLOAT32);
  }

  /** A scalar constant of {@code dtype} ({@code value} rounded to it). */
  String scalar(float value, GraphDtype dtype) {
    String name = "c" + (counter++);
    TensorProto.Builder t = TensorProto.newBuilder().setName(name).setDataType(dtype.onnxType());
    if (dtype == GraphDtype.FLOAT32) {
      t.addFloatData(value);
    } else {
      // 16-bit floats travel as their bit patterns in int32_data (ONNX's rule for them)
      java.lang.foreign.MemorySegment bits = java.lang.foreign.MemorySegment.ofArray(new short[1]);
      dtype.store(bits, 0, value);
      t.addInt32Data(bits.get(java.lang.foreign.ValueLayout.JAVA_SHORT, 0) & 0xFFFF);
    }
    graph.addInitializer(t);
    return name;
  }

  static AttributeProto attr(String name, long value) {
    return AttributeProto.newBuilder().setName(name).setType(AttributeProto.AttributeType.INT)
        .setI(value).build();
  }

  /**
   * An fp32 table as an initializer in the weights file ({@link WeightSource.Table}): for large
   * constants a step reads by row, which as inline constants the session would hold whole.
   */
  String table(long[] dims, float[] values) {
    String name = "table" + (counter++);
    externalInitializer(name, FLOAT, dims, WeightSource.Table.of(name, values));
    return name;
  }

  /** A float constant of the given shape (row-major values). */
  String floats(long[] dims, float... values) {
    String name = "c" + (counter++);
    TensorProto.Builder t = TensorProto.newBuilder().setName(name).setDataType(FLOAT);
    for (long d : dims) {
      t.addDims(d);
    }
    for (float v : values) {
      t.addFloatData(v);
    }
    graph.addInitializer(t);
    return name;
  }

  static AttributeProto attr(String name, float value) {
    return AttributeProto.newBuilder().setName(name).setType(AttributeProto.AttributeType.FLOAT)
        .setF(value).build();
  }

  /**
   * The finished graph at the given default-domain opset, importing {@code com.microsoft} 1,
   * with every offered weight a node reads declared as an fp32 external initializer.
   */
  OnnxGraph finish(int opset, String producer) {
    java.util.Set<String> read = new java.util.HashSet<>();
    for (NodeProto n : graph.getNodeList()) {
      read.addAll(n.getInputList());
    }
    offered.forEach((name, w) -> {
      if (read.contains(name) && !externals.containsKey(name)) {
        externalInitializer(name, w.elemType(), w.dims(), new WeightSource.Dense(name));
      }
    });
    return new OnnxGraph(model(opset, producer).toByteArray(), List.copyOf(externals.values()));
  }

  /** The model alone, for graphs with no external initializers. */
  ModelProto model(int opset, String producer) {
    return ModelProto.newBuilder()
        .setIrVersion(8)
        .setProducerName(producer)
        .addOpsetImport(OperatorSetIdProto.newBuilder().setDomain("").setVersion(opset))
        .addOpsetImport(OperatorSetIdProto.newBuilder().setDomain("com.microsoft").setVersion(1))
        .setGraph(graph)
        .build();
  }
}
