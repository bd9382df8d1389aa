package dev.radixserve.model;

import ai.onnx.proto.OnnxMl.ModelProto;
import ai.onnx.proto.OnnxMl.NodeProto;
import dev.radixserve.model.graph.ExternalInitializer;
import dev.radixserve.model.graph.OnnxGraph;
import dev.radixserve.model.graph.PagedGraph;
import dev.radixserve.model.ort.ElementType;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Reads ahead, into the page cache, the rows a step will read by token id from the tables that
 * stay mapped from the weights file: the token embedding's rows (a float table's, or a quantized
 * table's codes, scales and zero points).
 *
 * <p>Why: {@link WeightPages#readByRow} keeps those tables out of memory (a page comes in when a
 * row on it is read), so a token whose rows are not in the page cache costs its step faults that
 * read the disk, one after another inside ONNX Runtime's gather: ~2.4 a token of random ids on the
 * Llama-3.2-1B shape, 1.1 ms of a 66 ms decode step and 46-60 ms of a 512-token prefill on a
 * local disk (docs/benchmarks/journal/2026-12-01b-q4_0-decode-step.md). Asked as soon as the ids
 * are known ({@code posix_fadvise(WILLNEED)}: a sampled token right after sampling, a prefill's
 * ids before its step), the kernel reads them in parallel and off the step's path, and the gather
 * maps pages that are already there. Only the rows asked for are read: the table stays as small
 * in memory as readByRow made it.
 *
 * <p>A hint: without posix_fadvise, or when a read is late, the step faults as before. The
 * engine thread calls it; {@link #close} comes after the runner's last step.
 */
public final class RowPrefetch implements AutoCloseable {

  /** Nothing to read ahead: no table read by row, or no descriptor to read it through. */
  public static final RowPrefetch NONE = new RowPrefetch(-1, List.of());

  /** A table read by token id: its first byte's offset in the file, a row's bytes, its rows. */
  record Table(long offset, long rowBytes, long rows) {}

  private final int fd;
  private final List<Table> tables;
  private boolean closed;

  private RowPrefetch(int fd, List<Table> tables) {
    this.fd = fd;
    this.tables = List.copyOf(tables);
  }

  /**
   * For the tables of {@code graph} that a step reads by token id, at {@code offsets} (the
   * weights file's {@link WeightsFile.Layout}, in the graph's initializer order) in {@code file};
   * {@link #NONE} when it reads none or the file cannot be opened. Open it before a temporary
   * file is deleted: the descriptor keeps reading it afterwards.
   */
  static RowPrefetch open(Path file, OnnxGraph graph, long[] offsets) {
    List<Table> tables = tables(graph, offsets);
    if (tables.isEmpty()) {
      return NONE;
    }
    int fd = WeightPages.openForReads(file);
    return fd < 0 ? NONE : new RowPrefetch(fd, tables);
  }

  /**
   * The initializers a {@code Gather} or {@code GatherBlockQuantized} indexes by the graph's
   * {@link PagedGraph#INPUT_IDS} (data, and a quantized table's scales and zero points), as
   * tables of their rows.
   */
  static List<Table> tables(OnnxGraph graph, long[] offsets) {
    List<ExternalInitializer> initializers = graph.initializers();
    Map<String, Integer> index = WeightsFile.positions(initializers);
    ModelProto model = WeightsFile.parse(graph);
    List<Table> tables = new ArrayList<>();
    for (NodeProto node : model.getGraph().getNodeList()) {
      boolean byIds = node.getInputCount() > 1
          && node.getInput(1).equals(PagedGraph.INPUT_IDS);
      List<String> read = switch (node.getOpType()) {
        case "Gather" -> byIds ? List.of(node.getInput(0)) : List.of();
        case "GatherBlockQuantized" -> byIds
            ? node.getInputList().stream().filter(n -> !n.equals(PagedGraph.INPUT_IDS)).toList()
            : List.of();
        default -> List.of();
      };
      for (String name : read) {
        Integer i = index.get(name);
        if (i != null) {
          tables.add(table(initializers.get(i), offsets[i]));
        }
      }
    }
    return tables.stream().distinct().toList(); // a table two gathers read is read ahead once
  }

  private static Table table(ExternalInitializer init, long offset) {
    long[] dims = init.dims();
    long rowBytes = ElementType.ofCode(init.elemType()).bytes();
    for (int d = 1; d < dims.length; d++) {
      rowBytes *= dims[d];
    }
    return new Table(offset, rowBytes, dims[0]);
  }

  /**
   * Starts reading the rows of {@code ids[from, to)} of every table into the page cache; returns
   * at once. Ids outside a table are skipped (the step refuses them itself).
   */
  public void rows(int[] ids, int from, int to) {
    if (closed || tables.isEmpty()) {
      return;
    }
    for (int i = from; i < to; i++) {
      int id = ids[i];
      for (Table t : tables) {
        if (id >= 0 && id < t.rows()) {
          WeightPages.willNeed(fd, t.offset() + id * t.rowBytes(), t.rowBytes());
        }
      }
    }
  }

  @Override
  public void close() {
    if (!closed && fd >= 0) {
      WeightPages.closeForReads(fd);
    }
    closed = true;
  }
}
