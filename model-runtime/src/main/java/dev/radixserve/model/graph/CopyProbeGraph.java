package dev.radixserve.model.graph;

import java.util.List;

/**
 * {@code y = x + 0} over one large tensor: reads and writes every byte once, which makes its run
 * time a measure of the device's copy bandwidth (the yardstick of the decode roofline).
 */
public final class CopyProbeGraph {

  public static final String X = "x";
  public static final String Y = "y";

  private CopyProbeGraph() {}

  public static byte[] build(GraphDtype dtype) {
    GraphBuilder g = new GraphBuilder("copy_probe");
    g.input(X, dtype.onnxType(), "n");
    g.node("Add", "", "copy", List.of(X, g.scalar(0f, dtype)), List.of(Y));
    g.declareOutput(Y, dtype.onnxType(), "n");
    return g.model(17, "radixserve").toByteArray();
  }
}
