package dev.radixserve.model;

import ai.onnx.proto.OnnxMl.ModelProto;
import ai.onnx.proto.OnnxMl.NodeProto;
import com.google.protobuf.InvalidProtocolBufferException;
import dev.radixserve.model.graph.ExternalInitializer;
import dev.radixserve.model.graph.GraphDtype;
import dev.radixserve.model.graph.OnnxGraph;
import dev.radixserve.model.ort.ElementType;
import dev.radixserve.model.quant.QuantSpec;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * What a model will cost in memory on the CPU runner ({@link OnnxModelRunner}), known before a
 * weight is read: the graph is built (cheap) and its initializers counted as they will be made.
 *
 * <pre>
 *   serving = weights + packed MatMulNBits weights + graph constants + KV pool + runtime
 *   peak    = serving + weights + pre-packed + checkpoint
 * </pre>
 *
 * Serving: ONNX Runtime keeps its copy of the weights; MatMulNBits' pre-packed form of its B
 * is counted beside it (an int8 layer held about its B twice on an 80 M-parameter model; Gemm's
 * packed fp32 replaces the original). Peak, while the session is created: the weights exist twice ({@link
 * WeightTensors}' native copy and ONNX Runtime's, {@code AddExternalInitializers}), pre-packing
 * makes its forms of every packed matrix before originals go, and the checkpoint's mapped pages
 * are resident (file pages: the kernel can drop them, so the check against free memory leaves
 * them out, see {@link #peakAnonymousBytes}). Measured against this on the 1B shape: serving
 * 0.69–1.17× the plan, peak 0.75–0.97× (docs/benchmarks/journal/2026-11-21-to-28.md "A model costs its bytes"): the
 * MatMulNBits term over-counts there, while {@code MemoryPlanTest}'s smaller model shows it.
 *
 * @param weightBytes the initializers handed to ONNX Runtime: the weights as served (quantized
 *     blocks, scales and zero points, fp32 otherwise)
 * @param prepackedBytes the part of {@code weightBytes} that an operator pre-packs
 * @param nbitsBytes the part that is MatMulNBits' B (its packed form stays beside it)
 * @param graphBytes the serialized graph, whose constants (rotary tables) ONNX Runtime keeps
 * @param kvPoolBytes the KV pool, allocated and touched at start
 * @param checkpointBytes the checkpoint's tensors as stored (memory-mapped while loading)
 * @param runtimeBytes the process without model: JVM (heap after the load's collection, code),
 *     ONNX Runtime's library and threads; an estimate ({@link #RUNTIME_BYTES})
 */
public record MemoryPlan(long weightBytes, long prepackedBytes, long nbitsBytes, long graphBytes,
    long kvPoolBytes, long checkpointBytes, long runtimeBytes) {

  /**
   * The process without a model, measured: a server on the embedded GPT-2 (a few MiB of weights)
   * settles at about this RSS (docs/benchmarks/journal/2026-11-21-to-28.md "A model costs its bytes").
   */
  public static final long RUNTIME_BYTES = 320L << 20;

  private static final Set<String> PACKING_OPS = Set.of("MatMulNBits", "Gemm", "MatMul");

  /** What the server settles at once loaded. */
  public long servingBytes() {
    return weightBytes + nbitsBytes + graphBytes + kvPoolBytes + runtimeBytes;
  }

  /** The most RSS the process reaches while it loads (the session's creation). */
  public long peakBytes() {
    return peakAnonymousBytes() + checkpointBytes;
  }

  /** The peak less the checkpoint's file pages: memory the kernel cannot reclaim. */
  public long peakAnonymousBytes() {
    return servingBytes() + weightBytes + prepackedBytes;
  }

  /** A pool of {@code numBlocks} blocks of {@code blockSize} tokens. */
  public static MemoryPlan of(ModelWeights weights, int blockSize, int numBlocks,
      QuantSpec quant) {
    OnnxGraph graph = weights.graph().build(blockSize, GraphDtype.FLOAT32, quant);
    long checkpoint = weights.tensors().values().stream().mapToLong(t -> t.data().byteSize())
        .sum();
    return new MemoryPlan(graph.initializerBytes(), packedBytes(graph, PACKING_OPS),
        packedBytes(graph, Set.of("MatMulNBits")), graph.model().length,
        numBlocks * KvPool.bytesPerBlock(weights.config(), blockSize), checkpoint,
        RUNTIME_BYTES);
  }

  /** A pool of as many blocks as fit in {@code kvBudgetBytes}. */
  public static MemoryPlan forBudget(ModelWeights weights, int blockSize, long kvBudgetBytes,
      QuantSpec quant) {
    return of(weights, blockSize, KvPool.blocksFor(weights.config(), blockSize, kvBudgetBytes),
        quant);
  }

  /** Bytes of the initializers that an operator of {@code ops} reads as its B (input 1). */
  static long packedBytes(OnnxGraph graph, Set<String> ops) {
    Map<String, Long> bytes = new HashMap<>();
    for (ExternalInitializer i : graph.initializers()) {
      long b = ElementType.ofCode(i.elemType()).bytes();
      for (long d : i.dims()) {
        b *= d;
      }
      bytes.put(i.name(), b);
    }
    ModelProto model;
    try {
      model = ModelProto.parseFrom(graph.model());
    } catch (InvalidProtocolBufferException e) {
      throw new IllegalStateException("the graph built here does not parse", e);
    }
    long total = 0;
    for (NodeProto node : model.getGraph().getNodeList()) {
      if (ops.contains(node.getOpType()) && node.getInputCount() > 1) {
        total += bytes.getOrDefault(node.getInput(1), 0L);
        bytes.remove(node.getInput(1)); // packed once however many nodes read it
      }
    }
    return total;
  }

  /** One line per figure, in MiB, for check-model and serve's refusal. */
  public String describe() {
    return String.format("weights as served %s (+%s MatMulNBits packing), graph constants %s,"
        + " KV pool %s, runtime ~%s: serving ~%s; peak while loading ~%s (%s of it the"
        + " checkpoint's mapped pages)", mib(weightBytes), mib(nbitsBytes), mib(graphBytes),
        mib(kvPoolBytes), mib(runtimeBytes), mib(servingBytes()), mib(peakBytes()),
        mib(checkpointBytes));
  }

  public static String mib(long bytes) {
    return String.format("%,d MiB", (bytes + (1L << 19)) >> 20);
  }
}
