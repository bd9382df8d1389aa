package dev.radixserve.model.graph;

import static dev.radixserve.model.graph.GraphBuilder.attr;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Gives a MatMulNBits an even number of rows: its input padded with one zero row when the count
 * is odd, its product trimmed back.
 *
 * <p>Why: ONNX Runtime's CPU MatMulNBits at {@code accuracy_level} 4 computes rows in pairs
 * and the last row of an odd count with another kernel, whose horizontal sum adds the same
 * products in another order (MLAS's {@code Q4Int8GemmR2xC4BlkLen64Avx512} reduces with
 * {@code _mm512_reduce_add_ps}, {@code Q4Int8GemmR1xC4BlkLen64Avx512} with
 * {@code FoldAccumulators}; the blocks of 32 have the same pair). So a row's bits depended on
 * whether it was the odd one out of its call: KV a one-token decode step wrote differed from the
 * same position's KV in a prefill, and a prompt in three chunks from the same prompt in one, an
 * ulp or two, in 4-bit blocks of 32 or more and 8-bit blocks of 128 or more (measured:
 * MatMulNBitsChunkingTest). The threads split the rows at multiples of 128, so with an even count
 * every row goes through the pair kernel, whatever the call holds. A one-token decode step then
 * computes two rows, which the kernel does in one pass over the weights.
 */
final class EvenRows {

  private final GraphBuilder g;
  private final String rowsSource;
  /** [1] int64: the rows every padded input and trimmed product has; emitted on first use. */
  private String rows;
  /** [4] int64: Pad's {@code 0, 0, rows % 2, 0} for a [rows, K] input. */
  private String pads;
  private String zero;
  private final Map<String, String> padded = new HashMap<>();

  /**
   * @param rowsSource a value whose first dimension is the row count of every input this pads
   *     (a model's {@code input_ids} for its layers, {@code logits_index} for its head)
   */
  EvenRows(GraphBuilder g, String rowsSource) {
    this.g = g;
    this.rowsSource = rowsSource;
  }

  /** {@code x} [rows, K] with a zero row after it when rows is odd; once per input. */
  String pad(String x) {
    declare();
    return padded.computeIfAbsent(x, key -> g.op("Pad", "even_rows", x, pads));
  }

  /** The first rows of {@code y} (a product of a {@link #pad padded} input), into {@code out}. */
  String trim(String y, String out) {
    declare();
    String name = out == null ? g.fresh("trimmed") : out;
    g.node("Slice", "", name + "/Slice", List.of(y, zero, rows, zero), List.of(name));
    return name;
  }

  private void declare() {
    if (rows != null) {
      return;
    }
    rows = g.op("Shape", "rows", List.of(rowsSource), attr("start", 0L), attr("end", 1L));
    zero = g.ints(0);
    String odd = g.op("Mod", "odd_rows", rows, g.ints(2));
    pads = g.op("Concat", "even_pads", List.of(g.ints(0, 0), odd, zero), attr("axis", 0L));
  }
}
