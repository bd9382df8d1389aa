package dev.radixserve.model;

import ai.onnx.proto.OnnxMl.ModelProto;
import ai.onnx.proto.OnnxMl.StringStringEntryProto;
import ai.onnx.proto.OnnxMl.TensorProto;
import com.google.protobuf.InvalidProtocolBufferException;
import dev.radixserve.model.graph.ExternalInitializer;
import dev.radixserve.model.graph.OnnxGraph;
import dev.radixserve.model.ort.ElementType;
import dev.radixserve.model.ort.OrtEnv;
import dev.radixserve.model.ort.OrtSession;
import dev.radixserve.model.ort.SessionOptions;
import dev.radixserve.model.weights.Tensor;
import dev.radixserve.model.weights.WeightsDigest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.charset.StandardCharsets;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.logging.Logger;
import java.util.List;
import java.util.Map;

/**
 * The weights handed to ONNX Runtime as a file it maps rather than memory it copies: every
 * external initializer of a graph is made one checkpoint tensor at a time ({@link
 * WeightTensors#forEach}) and written at a page-aligned offset of one file, the model's
 * external-data references are pointed into it, and the session is created over it. ONNX Runtime
 * memory-maps external data on the CPU, so an initializer costs resident memory only where it
 * is read: a matrix that an operator pre-packs (MatMulNBits, Gemm) is read once, packed into
 * memory of its own, and unmapped; an embedding table that stays mapped costs only the rows
 * that tokens touch. No weight is ever held twice in anonymous memory, which is what kept the
 * peak while loading at about three times the serving footprint with {@code
 * AddExternalInitializers} (it copies every value, then pre-packing copies again).
 *
 * <p>Initializers made from the same source (a tied table's quantized blocks, read by the head's
 * MatMulNBits and the embedding's GatherBlockQuantized, whose layouts are the same bytes) are
 * written once and referenced twice.
 *
 * <p>A temporary file ({@link WeightStore#temporary}) lives in a fresh directory and is deleted as
 * soon as the session exists: ONNX Runtime's mappings keep what it still reads. A cache entry
 * ({@link WeightStore#cache}) is kept, so a restart maps it at once instead of quantizing again.
 */
final class WeightsFile {

  /** The layout and the bytes made for each source, as a cache entry holds them. */
  static final int FORMAT = 1;
  private static final Logger LOG = Logger.getLogger(WeightsFile.class.getName());
  /** Each initializer starts on a page of its own, so mapping it maps nothing else. */
  private static final long ALIGN = 4096;
  /** ONNX Runtime resolves the model's external data against this folder (a model from bytes). */
  static final String FOLDER_KEY = "session.model_external_initializers_file_folder_path";
  /**
   * How often the file's mappings are paged out while the session is made: about the time the
   * 1B shape's session takes to read 100 MiB of it (load peak 1,870-2,040 MiB without, 1,640-1,730
   * with; docs/benchmarks/journal/2026-11-29f-rows-by-page.md).
   */
  private static final long PAGER_PERIOD_MILLIS = 100;
  /** Writes go in slices of this size (a ByteBuffer view is limited to 2 GiB). */
  private static final long WRITE_SLICE = 64L << 20;
  /** A heap array is written through a native buffer of this size (it stays in the caches). */
  private static final long STAGING = 1L << 20;

  private WeightsFile() {}

  /**
   * Where each initializer lies in the file, which ones are written (the others share an
   * earlier one's bytes), the file's length and the bytes written.
   */
  record Layout(long[] offsets, boolean[] written, long length, long dataBytes) {}

  /**
   * Offsets for {@code initializers} in order, page-aligned; an initializer made from the same
   * source as an earlier one of the same type and size shares its offset (and is not written).
   */
  static Layout layout(List<ExternalInitializer> initializers) {
    long[] offsets = new long[initializers.size()];
    boolean[] written = new boolean[initializers.size()];
    Map<String, Long> bySource = new HashMap<>();
    long end = 0;
    long length = 0;
    long data = 0;
    for (int i = 0; i < offsets.length; i++) {
      ExternalInitializer init = initializers.get(i);
      long bytes = bytes(init);
      String key = init.source() + "|" + init.elemType() + "|" + bytes;
      Long shared = bySource.get(key);
      if (shared != null) {
        offsets[i] = shared;
        continue;
      }
      offsets[i] = end;
      written[i] = true;
      bySource.put(key, end);
      data += bytes;
      length = end + bytes;
      end = (length + ALIGN - 1) / ALIGN * ALIGN;
    }
    return new Layout(offsets, written, length, data);
  }

  /**
   * A session over {@code graph} whose initializers are read from a weights file in {@code
   * store}: one written from {@code tensors} now, or, for a cache, the entry a previous start
   * wrote for the same checkpoint and graph. A temporary file is gone once this returns.
   */
  static OrtSession session(OrtEnv env, OnnxGraph graph, Map<String, Tensor> tensors,
      SessionOptions options, WeightStore store) {
    Opened opened = open(env, graph, tensors, options, store);
    opened.rows().close();
    return opened.session();
  }

  /** A session, and the read-ahead of the rows its steps read by token id from the file. */
  record Opened(OrtSession session, RowPrefetch rows) {}

  /** As {@link #session}, with the {@link RowPrefetch} of the file it maps (close both). */
  static Opened open(OrtEnv env, OnnxGraph graph, Map<String, Tensor> tensors,
      SessionOptions options, WeightStore store) {
    Layout layout = layout(graph.initializers());
    Path folder;
    Path file;
    try {
      Files.createDirectories(store.dir());
      if (store.cached()) {
        folder = store.dir();
        file = folder.resolve(entryName(graph, store.checkpointKey()));
        if (!Files.isRegularFile(file) || Files.size(file) != layout.length()) {
          Path partial = Files.createTempFile(folder, file.getFileName() + ".", ".partial");
          Files.delete(partial);
          try {
            write(partial, tensors, graph.initializers(), layout);
            Files.move(partial, file, StandardCopyOption.ATOMIC_MOVE,
                StandardCopyOption.REPLACE_EXISTING);
          } finally {
            Files.deleteIfExists(partial); // a failed write leaves no partial entry behind
          }
          LOG.info(String.format("weights written to %s (%s)", file,
              MemoryPlan.mib(layout.length())));
          LoadHeap.giveBack();
        } else {
          LOG.info("weights mapped from " + file + " (written by an earlier start)");
          // what the load made on the heap before this (tokenizer, graph, digest) is garbage too
          LoadHeap.giveBack();
        }
      } else {
        folder = Files.createTempDirectory(store.dir(), "radixserve-weights-");
        file = folder.resolve("weights.bin");
        try {
          write(file, tensors, graph.initializers(), layout);
        } catch (RuntimeException e) {
          Files.deleteIfExists(file);
          Files.deleteIfExists(folder);
          throw e;
        }
        LoadHeap.giveBack();
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the weights under " + store.dir(), e);
    }
    try {
      options.config(FOLDER_KEY, folder.toString());
      OrtSession session;
      // what the session has read and packed leaves the RSS while it reads the rest
      try (WeightPages.Pager pager = WeightPages.pagedWhileLoading(file, PAGER_PERIOD_MILLIS)) {
        session = OrtSession.create(env,
            relocate(graph, layout, file.getFileName().toString()), options);
      }
      WeightPages.readByRow(file); // what stays mapped costs the pages serving reads
      try {
        return new Opened(session, RowPrefetch.open(file, graph, layout.offsets()));
      } catch (RuntimeException e) {
        session.close();
        throw e;
      }
    } finally {
      if (!store.cached()) {
        try {
          Files.deleteIfExists(file);
          Files.deleteIfExists(folder);
        } catch (IOException e) {
          // the session holds its mappings either way; a leftover file is the only cost
          LOG.warning("could not delete " + file + ": " + e);
        }
      }
    }
  }

  /**
   * The cache entry's file name: a digest of what makes its bytes, the checkpoint (its key) and
   * the graph (initializer names, types, shapes and sources, the quantization included), and of
   * this code's format ({@link #FORMAT}; bump it when the bytes made for a source change).
   */
  static String entryName(OnnxGraph graph, String checkpointKey) {
    MessageDigest sha = WeightsDigest.sha256();
    sha.update((FORMAT + "|" + checkpointKey + "|").getBytes(StandardCharsets.UTF_8));
    for (ExternalInitializer init : graph.initializers()) {
      sha.update((init.name() + "|" + init.elemType() + "|" + Arrays.toString(init.dims()) + "|"
          + init.source() + "\n").getBytes(StandardCharsets.UTF_8));
    }
    return HexFormat.of().formatHex(sha.digest(), 0, 16) + ".weights";
  }

  /** Makes and writes every initializer that is {@code written} in {@code layout}. */
  static void write(Path file, Map<String, Tensor> tensors, List<ExternalInitializer> initializers,
      Layout layout) {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW,
        StandardOpenOption.WRITE)) {
      WeightTensors.forEach(tensors, initializers, (i, data) -> {
        if (layout.written()[i]) {
          writeAt(ch, data, layout.offsets()[i]);
        }
      });
      if (ch.size() != layout.length()) {
        throw new IllegalStateException("wrote " + ch.size() + " bytes of weights, the layout"
            + " has " + layout.length());
      }
    } catch (IOException e) {
      throw new UncheckedIOException("writing the weights to " + file, e);
    }
  }

  private static void writeAt(FileChannel ch, MemorySegment data, long offset) {
    if (!data.isNative()) {
      writeHeapAt(ch, data, offset);
      return;
    }
    for (long at = 0; at < data.byteSize(); at += WRITE_SLICE) {
      write(ch, data.asSlice(at, Math.min(WRITE_SLICE, data.byteSize() - at)), offset + at);
    }
  }

  /**
   * A heap array's bytes (any element type) through a small native buffer: a channel copies a
   * heap buffer into a temporary direct one of its size anyway, which the JDK keeps per thread,
   * and a float array has no byte buffer view at all.
   */
  private static void writeHeapAt(FileChannel ch, MemorySegment data, long offset) {
    try (Arena staging = Arena.ofConfined()) {
      MemorySegment buffer = staging.allocate(Math.min(STAGING, data.byteSize()));
      for (long at = 0; at < data.byteSize(); at += buffer.byteSize()) {
        long n = Math.min(buffer.byteSize(), data.byteSize() - at);
        MemorySegment.copy(data, at, buffer, 0, n);
        write(ch, buffer.asSlice(0, n), offset + at);
      }
    }
  }

  private static void write(FileChannel ch, MemorySegment slice, long position) {
    try {
      ByteBuffer buffer = slice.asByteBuffer();
      while (buffer.hasRemaining()) {
        position += ch.write(buffer, position);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** {@code graph}'s model, parsed. */
  static ModelProto parse(OnnxGraph graph) {
    try {
      return ModelProto.parseFrom(graph.model());
    } catch (InvalidProtocolBufferException e) {
      throw new IllegalStateException("the graph built here does not parse", e);
    }
  }

  /** Each initializer's name → its position in {@code initializers} (and in a {@link Layout}). */
  static Map<String, Integer> positions(List<ExternalInitializer> initializers) {
    Map<String, Integer> index = new HashMap<>();
    for (int i = 0; i < initializers.size(); i++) {
      index.put(initializers.get(i).name(), i);
    }
    return index;
  }

  /** The model with each initializer's external data at its place in {@code fileName}. */
  static byte[] relocate(OnnxGraph graph, Layout layout, String fileName) {
    ModelProto model = parse(graph);
    List<ExternalInitializer> initializers = graph.initializers();
    Map<String, Integer> index = positions(initializers);
    ModelProto.Builder b = model.toBuilder();
    for (TensorProto.Builder t : b.getGraphBuilder().getInitializerBuilderList()) {
      Integer i = index.get(t.getName());
      if (i == null) {
        continue; // a constant held in the model itself
      }
      t.clearExternalData()
          .addExternalData(entry("location", fileName))
          .addExternalData(entry("offset", Long.toString(layout.offsets()[i])))
          .addExternalData(entry("length", Long.toString(bytes(initializers.get(i)))));
    }
    return b.build().toByteArray();
  }

  private static StringStringEntryProto entry(String key, String value) {
    return StringStringEntryProto.newBuilder().setKey(key).setValue(value).build();
  }

  static long bytes(ExternalInitializer init) {
    long bytes = ElementType.ofCode(init.elemType()).bytes();
    for (long d : init.dims()) {
      bytes *= d;
    }
    return bytes;
  }
}
