package dev.radixserve.model;

import ai.onnx.proto.OnnxMl.ModelProto;
import ai.onnx.proto.OnnxMl.NodeProto;
import com.google.protobuf.InvalidProtocolBufferException;
import dev.radixserve.model.graph.ExternalInitializer;
import dev.radixserve.model.graph.GraphDtype;
import dev.radixserve.model.graph.OnnxGraph;
import dev.radixserve.model.quant.QuantSpec;
import dev.radixserve.model.weights.Tensor;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What a model will cost in memory on the CPU runner ({@link OnnxModelRunner}), known before a
 * weight is read: the graph is built (cheap) and its initializers counted as they will be made
 * and read.
 *
 * <pre>
 *   serving = resident weights - released + packing + graph constants + KV pool + runtime
 *   peak    = serving + released + the largest tensor's work while loading
 * </pre>
 *
 * The weights are a file ONNX Runtime maps ({@link WeightsFile}). Resident: every initializer
 * except the tables read by row (an embedding's Gather or GatherBlockQuantized: mapped, resident
 * only where tokens touch them, so they are left out here and grow with the vocabulary served).
 * A matrix that is pre-packed (MatMulNBits, Gemm, MatMul) has its packed form in place of its
 * mapping; MatMulNBits' packed form also holds its scales and a sum per block (MLAS), while the
 * original scales and zero points stay mapped until the server pages them out after its warm-up
 * ({@link WeightPages}: released): packing = twice the MatMulNBits scales, plus {@value
 * #NBITS_SESSION_MIB} MiB for a graph with any MatMulNBits, an allowance measured rather than
 * derived (an 80 M-parameter model held 30–90 MiB more than its packed weights, int4 and int8,
 * varying from run to run; with the page-out, int4 104–123 MB in all against 132 planned with
 * the 48 MiB allowance then; with the load's heap given back before pre-packing, 87–106 MB
 * against 120 planned with 36 MiB, so 20 MiB then; on 2026-11-30 (MemoryPlanTest, the JIT
 * settled first) 74–87 MB against 96 planned with 20 MiB, so 8 MiB now). While loading, one
 * checkpoint tensor per worker is read (its pages dropped once done) and made twice (the
 * quantizer's blocks on the heap and their native copy written out); counted once, for the
 * largest, on top of serving (the pre-packing of a matrix while its mapping is resident is
 * smaller). Measured against this on the 1B shape and held by {@code MemoryPlanTest} on a small
 * model (docs/benchmarks/journal/2026-11-28-memory.md).
 *
 * @param weightBytes the weights file: every initializer once (a tied table's quantized blocks,
 *     read by the head and the embedding, once)
 * @param residentBytes the initializers that are resident once loaded (all but row-read tables)
 * @param releasedBytes the part of {@code residentBytes} that only the load reads, paged out
 *     once the server has warmed up: MatMulNBits' original scales and zero points
 * @param packingBytes what pre-packing adds beside them (MatMulNBits' scales and block sums)
 * @param graphBytes the serialized graph, whose constants ONNX Runtime keeps (small: the rotary
 *     tables are in the weights file, read by row)
 * @param kvPoolBytes the KV pool, allocated and touched at start
 * @param loadBytes the largest checkpoint tensor's work while loading: its data as stored
 *     (mapped, dropped once done) and twice what is made from it
 * @param loadFileBytes the part of {@code loadBytes} that is the checkpoint's file pages
 * @param runtimeBytes the process without model: JVM (heap after the load's collection, code),
 *     ONNX Runtime's library and threads; an estimate ({@link #RUNTIME_BYTES})
 */
public record MemoryPlan(long weightBytes, long residentBytes, long releasedBytes,
    long packingBytes, long graphBytes, long kvPoolBytes, long loadBytes, long loadFileBytes, long runtimeBytes) {

  /**
   * The process without a model, measured: a server on the embedded GPT-2 (a few MiB of weights)
   * settles at about this RSS.
   */
  public static final long RUNTIME_BYTES = 320L << 20;

  /** What a session with MatMulNBits holds beyond its packed weights, measured (see above). */
  static final long NBITS_SESSION_MIB = 8;

  /**
   * Operators that read a table by row, and its inputs: a table only they read is resident where
   * read (a lookup's data, scales and zero points; the rotary cos and sin tables).
   */
  private static final Map<String, Set<Integer>> ROW_INPUTS = Map.of("Gather", Set.of(0),
      "GatherBlockQuantized", Set.of(0, 2, 3), "RotaryEmbedding", Set.of(2, 3));

  /** What the server settles at once loaded. */
  public long servingBytes() {
    return residentBytes - releasedBytes + packingBytes + graphBytes + kvPoolBytes
        + runtimeBytes;
  }

  /** The most RSS the process reaches while it loads. */
  public long peakBytes() {
    return servingBytes() + releasedBytes + loadBytes;
  }

  /** The peak less the checkpoint's file pages: memory the kernel cannot reclaim. */
  public long peakAnonymousBytes() {
    return peakBytes() - loadFileBytes;
  }

  /** A pool of {@code numBlocks} blocks of {@code blockSize} tokens. */
  public static MemoryPlan of(ModelWeights weights, int blockSize, int numBlocks,
      QuantSpec quant) {
    OnnxGraph graph = weights.graph().build(blockSize, GraphDtype.FLOAT32, quant);
    ModelProto model;
    try {
      model = ModelProto.parseFrom(graph.model());
    } catch (InvalidProtocolBufferException e) {
      throw new IllegalStateException("the graph built here does not parse", e);
    }
    Set<String> lookups = lookupOnly(graph, model.getGraph().getNodeList());
    long resident = 0;
    for (ExternalInitializer i : graph.initializers()) {
      if (!lookups.contains(i.name())) {
        resident += WeightsFile.bytes(i);
      }
    }
    long[] load = largestTask(weights.tensors(), graph);
    List<NodeProto> nodes = model.getGraph().getNodeList();
    return new MemoryPlan(WeightsFile.layout(graph.initializers()).dataBytes(), resident,
        released(graph, nodes, lookups), packing(graph, nodes), graph.model().length,
        numBlocks * KvPool.bytesPerBlock(weights.config(), blockSize), load[0] + load[1],
        load[0], RUNTIME_BYTES);
  }

  /** A pool of as many blocks as fit in {@code kvBudgetBytes}. */
  public static MemoryPlan forBudget(ModelWeights weights, int blockSize, long kvBudgetBytes,
      QuantSpec quant) {
    return of(weights, blockSize, KvPool.blocksFor(weights.config(), blockSize, kvBudgetBytes),
        quant);
  }

  /** Initializers that only a row lookup reads (as its data, scales or zero points). */
  private static Set<String> lookupOnly(OnnxGraph graph, List<NodeProto> nodes) {
    Set<String> names = new HashSet<>(graph.initializerNames());
    Set<String> lookup = new HashSet<>();
    Set<String> other = new HashSet<>();
    for (NodeProto node : nodes) {
      Set<Integer> rows = ROW_INPUTS.getOrDefault(node.getOpType(), Set.of());
      for (int k = 0; k < node.getInputCount(); k++) {
        String in = node.getInput(k);
        if (names.contains(in)) {
          (rows.contains(k) ? lookup : other).add(in);
        }
      }
    }
    lookup.removeAll(other);
    return lookup;
  }

  /**
   * MatMulNBits' scales and zero points (inputs 2 and 3), which its packed form replaces: read
   * while loading, paged out after the warm-up ({@link WeightPages}). One a row lookup reads too
   * (a tied table's, shared by offset) is not: it lies in the table's pages.
   */
  private static long released(OnnxGraph graph, List<NodeProto> nodes, Set<String> lookups) {
    Map<String, Long> bytes = initializerBytes(graph);
    long total = 0;
    for (NodeProto node : nodes) {
      if (node.getOpType().equals("MatMulNBits")) {
        for (int k = 2; k < Math.min(4, node.getInputCount()); k++) {
          Long b = lookups.contains(node.getInput(k)) ? null : bytes.remove(node.getInput(k));
          total += b == null ? 0 : b;
        }
      }
    }
    return total;
  }

  /** Each initializer's bytes in the weights file, by name. */
  private static Map<String, Long> initializerBytes(OnnxGraph graph) {
    Map<String, Long> bytes = new HashMap<>();
    for (ExternalInitializer i : graph.initializers()) {
      bytes.put(i.name(), WeightsFile.bytes(i));
    }
    return bytes;
  }

  /** What pre-packing adds: twice MatMulNBits' scales (input 2), and the session allowance. */
  private static long packing(OnnxGraph graph, List<NodeProto> nodes) {
    Map<String, Long> bytes = initializerBytes(graph);
    long total = 0;
    boolean any = false;
    for (NodeProto node : nodes) {
      if (node.getOpType().equals("MatMulNBits") && node.getInputCount() > 2) {
        Long b = bytes.remove(node.getInput(2));
        total += b == null ? 0 : 2 * b;
        any = true;
      }
    }
    return total + (any ? NBITS_SESSION_MIB << 20 : 0);
  }

  /**
   * The checkpoint tensor whose work while loading is largest ({@link WeightTensors#forEach}
   * makes one tensor's initializers per task): {its bytes as stored, the bytes made} (made on the
   * heap and written from there; until 2026-12-03 also copied to native memory first, twice).
   */
  private static long[] largestTask(Map<String, Tensor> tensors, OnnxGraph graph) {
    Map<String, Long> made = new LinkedHashMap<>();
    WeightsFile.Layout layout = WeightsFile.layout(graph.initializers());
    List<ExternalInitializer> inits = graph.initializers();
    for (int i = 0; i < inits.size(); i++) {
      if (layout.written()[i]) {
        made.merge(inits.get(i).source().tensor(), WeightsFile.bytes(inits.get(i)), Long::sum);
      }
    }
    long[] largest = {0, 0};
    made.forEach((name, bytes) -> {
      Tensor t = tensors.get(name);
      long stored = t == null ? 0 : t.data().byteSize();
      if (stored + bytes > largest[0] + largest[1]) {
        largest[0] = stored;
        largest[1] = bytes;
      }
    });
    return largest;
  }

  /** One line per figure, in MiB, for check-model and serve's refusal. */
  public String describe() {
    return String.format("weights file %s (resident %s, +%s pre-packing, -%s paged out after the"
        + " warm-up; tables read by row are resident only where read), graph constants %s, KV pool"
        + " %s, runtime ~%s: serving ~%s; peak while loading ~%s", mib(weightBytes),
        mib(residentBytes), mib(packingBytes), mib(releasedBytes),
        mib(graphBytes), mib(kvPoolBytes), mib(runtimeBytes), mib(servingBytes()),
        mib(peakBytes()));
  }

  public static String mib(long bytes) {
    return String.format("%,d MiB", (bytes + (1L << 19)) >> 20);
  }
}
