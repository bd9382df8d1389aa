package dev.radixserve.model.graph;

import static dev.radixserve.model.graph.GraphBuilder.FLOAT;

import dev.radixserve.model.quant.QuantSpec;
import dev.radixserve.model.quant.WeightLayout;

/**
 * A graph of one linear layer, {@code x} float [T, K] → {@code y} float [T, N], emitted by
 * {@link Linear} as a model's layers are: the smallest graph that runs one (tests, benches).
 */
public final class LinearGraph {

  public static final String X = "x";
  public static final String Y = "y";
  public static final String IDS = "ids";

  private LinearGraph() {}

  /**
   * @param weight the checkpoint tensor's name, of {@code shape} in {@code layout}
   * @param bias the bias tensor's name ([N]); null for none
   */
  public static OnnxGraph build(String weight, WeightLayout layout, long[] shape, String bias,
      QuantSpec quant) {
    GraphBuilder g = new GraphBuilder("linear");
    long[] kn = layout.kn(shape);
    g.input(X, FLOAT, "T", kn[0]);
    new Linear(g, quant, FLOAT, X).emitInto(Y, X, weight, layout, shape, bias, true);
    g.declareOutput(Y, FLOAT, "T", kn[1]);
    return g.finish(PagedGpt2Graph.OPSET, "radixserve");
  }

  /**
   * A graph of one quantized embedding lookup, {@code ids} int64 [T] → {@code y} float [T, K]:
   * rows of {@code table} ([rows, K]) as {@link Linear#gatherRows} emits them for a model.
   */
  public static OnnxGraph gatherRows(String table, long[] shape, QuantSpec quant) {
    quant.requireDivides(table, shape[1]);
    GraphBuilder g = new GraphBuilder("embedding");
    g.input(IDS, GraphBuilder.INT64, "T");
    String rows = new Linear(g, quant, FLOAT, IDS).gatherRows(table, shape, IDS);
    g.node("Identity", "", Y + "/Identity", java.util.List.of(rows), java.util.List.of(Y));
    g.declareOutput(Y, FLOAT, "T", shape[1]);
    return g.finish(PagedGpt2Graph.OPSET, "radixserve");
  }
}
