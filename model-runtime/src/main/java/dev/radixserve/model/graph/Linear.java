package dev.radixserve.model.graph;

import static dev.radixserve.model.graph.GraphBuilder.INT64;
import static dev.radixserve.model.graph.GraphBuilder.UINT8;
import static dev.radixserve.model.graph.GraphBuilder.attr;

import dev.radixserve.model.quant.QuantSpec;
import dev.radixserve.model.quant.WeightLayout;
import dev.radixserve.model.graph.WeightSource.Part;
import dev.radixserve.model.graph.WeightSource.Quantized;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The one place a linear layer {@code y = x·W (+ b)} becomes graph nodes, for every model family:
 * the family names the checkpoint tensor, how it is stored ({@link WeightLayout}) and its bias;
 * this declares the initializers and picks the operator.
 *
 * <pre>
 *   not quantized, [in, out]   MatMul(x, W) → Add(b)
 *   not quantized, [out, in]   Gemm(x, W, b, transB=1)
 *   quantized (either layout)  com.microsoft.MatMulNBits(x, W.q, W.scales[, W.zero_points]) → Add(b)
 *                              K, N, bits, block_size, accuracy_level from the {@link QuantSpec}
 *   blocks needing even rows   Pad(x) to an even row count first, Slice the product back
 *                              ({@link EvenRows}, {@link QuantSpec#evenRows}); once per input
 *   GPTQ act-order             Gather(x, W.input_order, axis=-1) first (once per input and order;
 *                              none where x arrives in order, see {@link ActOrder})
 *   GGUF Q4_K (offsets)        MatMulNBits(x, W.q, W.scales) + MatMul(BlockSums(x), W.offsets)
 *                              symmetric int4 blocks of 32 holding the file's codes; BlockSums(x) =
 *                              ReduceSum(Reshape(x, [T, K/32, 32]), -1) [T, K/32], once per input;
 *                              W.offsets [K/32, N] (quant.OffsetWeight)
 * </pre>
 *
 * The bias stays a separate Add: MatMulNBits' own bias input is not implemented by every
 * execution provider (CUDA's kernel has none), and the Add over [T, N] is small beside the
 * weight it follows.
 */
final class Linear {

  static final String QWEIGHT = ".q";
  static final String SCALES = ".scales";
  static final String ZERO_POINTS = ".zero_points";
  static final String INPUT_ORDER = ".input_order";
  static final String OFFSETS = ".offsets";
  static final String GATHER_WEIGHT = ".gather_q";
  static final String GATHER_SCALES = ".gather_scales";
  static final String GATHER_ZERO_POINTS = ".gather_zero_points";

  private final GraphBuilder g;
  private final QuantSpec spec;
  private final int floatType;
  private final ActOrder actOrder;
  /** Act-order gathers emitted: (input value, owner of the order) → gathered value. */
  private final Map<String, String> gathered = new HashMap<>();
  /** Biases put in their weight's output order: bias → gathered value. */
  private final Map<String, String> permutedBiases = new HashMap<>();
  private final Set<String> declaredOrders = new HashSet<>();
  /** Block sums emitted for offset weights: input value → its [T, K/32] sums. */
  private final Map<String, String> blockSums = new HashMap<>();
  /** For the blocks whose kernel needs an even row count ({@link QuantSpec#evenRows}). */
  private final EvenRows evenRows;

  /**
   * @param floatType the graph's float type (ONNX code): MatMulNBits' scales are of A's type
   * @param rows a value whose first dimension is every input's row count ({@link EvenRows})
   */
  Linear(GraphBuilder g, QuantSpec spec, int floatType, String rows) {
    this(g, spec, floatType, ActOrder.NONE, rows);
  }

  /**
   * @param floatType the graph's float type (ONNX code): MatMulNBits' scales are of A's type
   * @param actOrder GPTQ act-order: which weights share an input's gather, which need none,
   *     and which write their outputs in another's input order
   * @param rows a value whose first dimension is every input's row count ({@link EvenRows})
   */
  Linear(GraphBuilder g, QuantSpec spec, int floatType, ActOrder actOrder, String rows) {
    this.g = g;
    this.spec = spec;
    this.floatType = floatType;
    this.actOrder = actOrder;
    this.evenRows = new EvenRows(g, rows);
  }

  /**
   * {@code x} [T, K] times the weight named {@code weight} (of {@code shape}, stored in
   * {@code layout}), plus {@code bias} ([N]; null for none), into a fresh value.
   *
   * @param quantize whether this layer takes the spec's quantization (a family passes false for
   *     layers the spec leaves alone, e.g. the LM head unless {@link QuantSpec#lmHead})
   */
  String emit(String x, String weight, WeightLayout layout, long[] shape, String bias,
      boolean quantize) {
    return emit(x, weight, layout, shape, bias, quantize, null);
  }

  /** As {@link #emit(String, String, WeightLayout, long[], String, boolean)}, into {@code out}. */
  String emitInto(String out, String x, String weight, WeightLayout layout, long[] shape,
      String bias, boolean quantize) {
    return emit(x, weight, layout, shape, bias, quantize, out);
  }

  private String emit(String x, String weight, WeightLayout layout, long[] shape, String bias,
      boolean quantize, String out) {
    long[] kn = layout.kn(shape);
    String product;
    boolean last = bias == null;
    if (quantize && spec.quantized()) {
      product = matMulNBits(x, weight, layout, kn[0], kn[1], last ? out : null);
    } else if (layout == WeightLayout.OUT_IN) {
      List<String> inputs = new ArrayList<>(List.of(x, g.weight(weight, shape)));
      if (bias != null) {
        inputs.add(g.weight(bias, kn[1]));
      }
      return named(out, "Gemm", weight, inputs, attr("transB", 1L));
    } else {
      product = named(last ? out : null, "MatMul", weight + "_mm",
          List.of(x, g.weight(weight, shape)));
    }
    if (bias == null) {
      return product;
    }
    return named(out, "Add", weight, List.of(product, bias(weight, layout, bias, kn[1])));
  }

  /**
   * {@code bias} ([n]) of {@code weight} (stored in {@code layout}, as the next product of the
   * same family is), in the order the weight writes its outputs: under GPTQ
   * act-order, a weight whose outputs are permuted into the next product's input order ({@link
   * ActOrder#outputOrders}) needs its bias permuted alike, a Gather of two initializers that ONNX
   * Runtime folds into a constant when the session starts. That keeps the next product's input
   * gather away for a family whose MLP has a bias between the two (GPT-2's c_fc, a Llama's
   * {@code mlp_bias}).
   */
  String bias(String weight, WeightLayout layout, String bias, long n) {
    String value = g.weight(bias, n);
    String consumer = actOrder.outputOrders().get(weight);
    if (consumer == null || !spec.quantized()) {
      return value;
    }
    return permutedBiases.computeIfAbsent(bias, key -> g.op("Gather", "act_order_bias",
        List.of(value, inputOrder(consumer + ".weight", layout, n)),
        attr("axis", 0L)));
  }

  private String matMulNBits(String x, String weight, WeightLayout layout, long k, long n,
      String out) {
    spec.requireDivides(weight, k);
    // this weight's own: an auto block size resolved for this K, or a file's Q4_K codes
    QuantSpec spec = this.spec.forWeight(weight, k);
    boolean offsets = spec.checkpoint() != null && spec.checkpoint().offsets();
    if (spec.checkpoint() != null && spec.checkpoint().actOrder()) {
      // GPTQ act-order: the blocks hold the inputs in group order (CheckpointRepacker.inputOrder)
      String owner = actOrder.inputOrderOwners().getOrDefault(weight, weight);
      String input = x;
      if (!owner.equals(ActOrder.IN_ORDER)) {
        x = gathered.computeIfAbsent(input + "|" + owner, key -> g.op("Gather", "act_order",
            List.of(input, inputOrder(owner, layout, k)), attr("axis", -1L)));
      }
    }
    int bits = spec.mode().bits();
    long blocks = k / spec.blockSize();
    long blob = (long) spec.blockSize() * bits / 8;
    boolean even = spec.evenRows();
    List<String> inputs = new ArrayList<>(List.of(even ? evenRows.pad(x) : x,
        quantized(weight, layout, spec, Part.WEIGHT, QWEIGHT, UINT8, n, blocks, blob),
        quantized(weight, layout, spec, Part.SCALES, SCALES, floatType, n, blocks)));
    if (spec.zeroPoints()) {
      inputs.add(quantized(weight, layout, spec, Part.ZERO_POINTS, ZERO_POINTS, UINT8, n,
          (blocks * bits + 7) / 8));
    }
    String product = named(offsets || even ? null : out, "MatMulNBits", "com.microsoft",
        weight + "_q", inputs, attr("K", k), attr("N", n), attr("bits", (long) bits),
        attr("block_size", (long) spec.blockSize()),
        attr("accuracy_level", (long) spec.accuracyLevel()));
    if (even) {
      product = evenRows.trim(product, offsets ? null : out);
    }
    if (!offsets) {
      return product;
    }
    String correction = g.op("MatMul", weight + "_offsets", blockSums(x, blocks, spec.blockSize()),
        quantized(weight, layout, spec, Part.OFFSETS, OFFSETS, floatType, blocks, n));
    return named(out, "Add", weight + "_q4k", List.of(product, correction));
  }

  /**
   * {@code x} [T, K] summed over each block of {@code block} inputs, [T, blocks]: what an offset
   * per block multiplies. Once per input (q/k/v, gate/up share theirs). The sums are of the
   * activations as they are, in the graph's float type, not MatMulNBits' int8-quantized ones.
   */
  private String blockSums(String x, long blocks, int block) {
    return blockSums.computeIfAbsent(x, key -> g.op("ReduceSum", "block_sums",
        List.of(g.op("Reshape", "blocks", x, g.ints(-1, blocks, block)), g.ints(-1)),
        attr("keepdims", 0L)));
  }

  /**
   * Rows {@code ids} of {@code table} ([rows, k], a row per token as an embedding or a tied head
   * stores it) quantized in this spec's blocks along k, as ONNX Runtime's
   * {@code com.microsoft.GatherBlockQuantized}: each row is dequantized, {@code (code − zero
   * point) · scale}, as MatMulNBits reads the same blocks. The blocks are the table quantized
   * once (a tied head's, when the head takes this spec), declared 2-D as the gather wants them;
   * zero points are always given (the symmetric default, 2^(bits−1), written out) so the gather
   * never relies on a default of its own. The caller makes sure the block divides k.
   */
  String gatherRows(String table, long[] shape, String ids) {
    long rows = shape[0];
    long k = shape[1];
    // not checked here that the block divides k: the head, which reads the same k in the same
    // spec, is checked when it is emitted, after the layers (whose refusal names them first)
    // a table on a file's own Q8_0 blocks takes them, as the tied head's MatMulNBits does
    QuantSpec spec = this.spec.forWeight(table, k);
    int bits = spec.mode().bits();
    long blocks = k / spec.blockSize();
    List<String> inputs = List.of(
        quantized(table, WeightLayout.OUT_IN, spec, Part.WEIGHT, GATHER_WEIGHT, UINT8, rows,
            k * bits / 8),
        ids,
        quantized(table, WeightLayout.OUT_IN, spec, Part.SCALES, GATHER_SCALES, floatType, rows,
            blocks),
        quantized(table, WeightLayout.OUT_IN, spec, Part.ZERO_POINTS, GATHER_ZERO_POINTS, UINT8,
            rows, (blocks * bits + 7) / 8));
    String out = g.fresh("embedded");
    g.node("GatherBlockQuantized", "com.microsoft", out + "/GatherBlockQuantized", inputs,
        List.of(out), attr("gather_axis", 0L), attr("quantize_axis", 1L),
        attr("block_size", (long) spec.blockSize()), attr("bits", (long) bits));
    return out;
  }

  /** {@code weight}'s input order (int64 [k]), declared once however many gathers read it. */
  private String inputOrder(String weight, WeightLayout layout, long k) {
    String name = weight + INPUT_ORDER;
    if (declaredOrders.add(name)) {
      quantized(weight, layout, Part.INPUT_ORDER, INPUT_ORDER, INT64, k);
    }
    return name;
  }

  private String quantized(String weight, WeightLayout layout, Part part, String suffix,
      int elemType, long... dims) {
    return quantized(weight, layout, spec, part, suffix, elemType, dims);
  }

  /** {@code weight}'s {@code part} as an initializer, made under {@code spec} (block resolved). */
  private String quantized(String weight, WeightLayout layout, QuantSpec spec, Part part,
      String suffix, int elemType, long... dims) {
    String name = weight + suffix;
    g.externalInitializer(name, elemType, dims, new Quantized(weight, layout, spec, part,
        actOrder.outputOrders().get(weight)));
    return name;
  }

  private String named(String out, String opType, String hint, List<String> inputs,
      ai.onnx.proto.OnnxMl.AttributeProto... attributes) {
    return named(out, opType, "", hint, inputs, attributes);
  }

  private String named(String out, String opType, String domain, String hint, List<String> inputs,
      ai.onnx.proto.OnnxMl.AttributeProto... attributes) {
    if (out == null && domain.isEmpty()) {
      return g.op(opType, hint, inputs, attributes);
    }
    String name = out == null ? g.fresh(hint) : out;
    g.node(opType, domain, name + "/" + opType, inputs, List.of(name), attributes);
    return name;
  }
}
