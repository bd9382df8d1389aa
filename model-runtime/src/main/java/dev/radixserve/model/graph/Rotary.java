package dev.radixserve.model.graph;

import static dev.radixserve.model.graph.GraphBuilder.attr;

import ai.onnx.proto.OnnxMl.AttributeProto;
import dev.radixserve.model.LlamaConfig;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Rotary position embedding in Hugging Face's half-split layout ({@code rotate_half}: pairs are
 * (i, i + D/2)) by ONNX Runtime's {@code com.microsoft.RotaryEmbedding}, one node per projection
 * instead of ten elementwise ones, shared by the rotary families.
 *
 * <p>Each distinct {@link LlamaConfig.Rope} gets its cos/sin tables, [max_positions, D/2] each,
 * with the angle rounded to fp32 first, times the rope's attention factor, as Hugging Face
 * computes them (128 k positions × 64 cost
 * 2 × 32 MB); a family with a rope per layer type (Gemma 3) gets one pair per type. The tables
 * lie in the weights file ({@link GraphBuilder#table}), so a server holds the pages of the
 * positions it has used, not the whole context's.
 */
final class Rotary {

  private final GraphBuilder g;
  private final GraphDtype dt;
  private final int headDim;
  private final int positions;
  private final String positionIds;
  private final Map<LlamaConfig.Rope, String[]> tables = new HashMap<>();

  /** @param positions rows of the tables: the model's max_position_embeddings */
  Rotary(GraphBuilder g, PagedIo io, int headDim, int positions) {
    this.g = g;
    this.dt = io.dt;
    this.headDim = headDim;
    this.positions = positions;
    this.positionIds = g.op("Unsqueeze", "position_ids", io.positions, g.ints(1));      // [T, 1]
  }

  /** {@code x} [T, heads*D] rotated by {@code rope} at each token's absolute position. */
  String apply(String x, int heads, LlamaConfig.Rope rope, String name) {
    String[] cosSin = tables.computeIfAbsent(rope, this::tables);
    String rows = cosSin[2];
    // [T, 1, h*D]: each token its own batch row, since RotaryEmbedding refuses a sequence axis
    // longer than its tables, and a step's T tokens (several sequences) may exceed the positions
    String batched = g.op("Unsqueeze", "batched", x, g.ints(1));
    List<AttributeProto> attrs = new java.util.ArrayList<>(List.of(attr("interleaved", 0L),
        attr("num_heads", (long) heads)));
    int dims = rope.rotaryDim(headDim);
    if (dims != headDim) {
      // partial_rotary_factor (Phi-4-mini): the first dims of each head rotate, the rest pass
      // through, as transformers' apply_rotary_pos_emb slices them
      attrs.add(attr("rotary_embedding_dim", (long) dims));
    }
    g.node("RotaryEmbedding", "com.microsoft", name + "/RotaryEmbedding",
        List.of(batched, rows, cosSin[0], cosSin[1]), List.of(name),
        attrs.toArray(AttributeProto[]::new));
    return g.op("Squeeze", "unbatched", name, g.ints(1));
  }

  /**
   * cos, sin and the table row of each token. A rope with a long context within the positions
   * (longrope) gets twice the rows, the short context's then the long one's, and a token's row is
   * its position, moved to the long rows from original_max_position_embeddings on; a long-context
   * sequence's positions arrive already offset by {@code positions} ({@code StepInputs}).
   */
  private String[] tables(LlamaConfig.Rope rope) {
    boolean longContext = rope.hasLongContext() && rope.originalMaxPositions() < positions;
    int half = rope.rotaryDim(headDim) / 2;
    int rows = longContext ? 2 * positions : positions;
    float[] cosTable = new float[rows * half];
    float[] sinTable = new float[cosTable.length];
    fill(rope.inverseFrequencies(headDim, false), rope, cosTable, sinTable, 0);
    if (longContext) {
      fill(rope.inverseFrequencies(headDim, true), rope, cosTable, sinTable, positions);
    }
    return new String[] {
        toGraphType(g.table(new long[] {rows, half}, cosTable)),
        toGraphType(g.table(new long[] {rows, half}, sinTable)),
        longContext ? longRows(rope.originalMaxPositions()) : positionIds};
  }

  /** Rows {@code [from, from + positions)}: cos and sin of position · inv_freq. */
  private void fill(double[] inv, LlamaConfig.Rope rope, float[] cos, float[] sin, int from) {
    // yarn's and longrope's attention factor scales cos and sin (transformers' attention_scaling)
    float attention = (float) rope.attentionFactor();
    int half = inv.length;
    for (int p = 0; p < positions; p++) {
      for (int i = 0; i < half; i++) {
        float angle = (float) p * (float) inv[i];
        cos[(from + p) * half + i] = (float) Math.cos(angle) * attention;
        sin[(from + p) * half + i] = (float) Math.sin(angle) * attention;
      }
    }
  }

  /**
   * [T, 1]: position p, or p + positions where original <= p < positions (transformers rotates
   * every token at or past the original length with the long factors); a long-context
   * sequence's positions are already past {@code positions}.
   */
  private String longRows(int original) {
    String pastOriginal = g.op("GreaterOrEqual", "past_original", positionIds,
        g.scalarInt(original));
    String shortRow = g.op("Less", "short_row", positionIds, g.scalarInt(positions));
    String moved = g.op("Add", "long_row", positionIds, g.scalarInt(positions));
    return g.op("Where", "rope_row", g.op("And", "to_long", pastOriginal, shortRow), moved,
        positionIds);
  }

  /** An fp32 constant in the graph's type (RotaryEmbedding takes its tables in the input's). */
  private String toGraphType(String fp32) {
    return dt == GraphDtype.FLOAT32 ? fp32
        : g.op("Cast", "table", List.of(fp32), attr("to", (long) dt.onnxType()));
  }
}
