package dev.radixserve.model.gguf;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.URISyntaxException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Variants of the fixture files llama.cpp's tools wrote, for the refusals: a file read by {@link
 * GgufFile}, its metadata and tensors edited, written back in GGUF v3 (integers as INT64, floats
 * as FLOAT64: the reader widens every type alike, {@code GgufFileTest} checks each on a file
 * gguf-py wrote).
 */
public final class GgufTestFiles {

  private GgufTestFiles() {}

  /** A tensor to write: ne innermost first, ggml type, bytes. */
  public record Entry(String name, long[] ne, GgmlType type, byte[] data) {}

  public static Path fixtures() {
    try {
      return Path.of(GgufTestFiles.class.getResource("/gguf").toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  /** {@code fixture} (a file name under /gguf) with its metadata and tensor list edited. */
  public static Path rewrite(String fixture, Path out, Consumer<Map<String, Object>> metadata,
      Consumer<List<Entry>> tensors) throws IOException {
    return rewrite(fixtures().resolve(fixture), out, metadata, tensors);
  }

  /** {@code source} with its metadata and tensor list edited, written to {@code out}. */
  public static Path rewrite(Path source, Path out, Consumer<Map<String, Object>> metadata,
      Consumer<List<Entry>> tensors) throws IOException {
    try (Arena arena = Arena.ofConfined()) {
      GgufFile f = GgufFile.map(source, arena);
      Map<String, Object> kv = new LinkedHashMap<>(f.metadata());
      List<Entry> entries = new ArrayList<>();
      for (GgufFile.TensorInfo t : f.tensors()) {
        entries.add(new Entry(t.name(), t.ne(), t.type(), t.data().toArray(ValueLayout.JAVA_BYTE)));
      }
      metadata.accept(kv);
      tensors.accept(entries);
      write(out, kv, entries);
      return out;
    }
  }

  static void write(Path out, Map<String, Object> kv, List<Entry> tensors) throws IOException {
    long alignment = kv.get(GgufFile.ALIGNMENT) instanceof Number n ? n.longValue()
        : GgufFile.DEFAULT_ALIGNMENT;
    Bytes b = new Bytes();
    b.u32(GgufFile.MAGIC).u32(3).u64(tensors.size()).u64(kv.size());
    kv.forEach((k, v) -> {
      b.string(k);
      b.value(v, true);
    });
    long offset = 0;
    List<Long> offsets = new ArrayList<>();
    for (Entry t : tensors) {
      b.string(t.name()).u32(t.ne().length);
      for (long d : t.ne()) {
        b.u64(d);
      }
      b.u32(t.type().id()).u64(offset);
      offsets.add(offset);
      offset += (t.data().length + alignment - 1) / alignment * alignment;
    }
    b.pad(alignment);
    for (Entry t : tensors) {
      b.out.writeBytes(t.data());
      b.pad(alignment);
    }
    Files.write(out, b.out.toByteArray());
  }

  private static final class Bytes {
    final ByteArrayOutputStream out = new ByteArrayOutputStream();

    Bytes u32(int v) {
      out.writeBytes(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(v).array());
      return this;
    }

    Bytes u64(long v) {
      out.writeBytes(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(v).array());
      return this;
    }

    Bytes string(String s) {
      byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
      u64(bytes.length);
      out.writeBytes(bytes);
      return this;
    }

    void pad(long alignment) {
      while (out.size() % alignment != 0) {
        out.write(0);
      }
    }

    /** The value with its type code first when {@code typed}. */
    void value(Object v, boolean typed) {
      switch (v) {
        case Long l -> {
          if (typed) {
            u32(GgufFile.ValueType.INT64.ordinal());
          }
          u64(l);
        }
        case Integer i -> value((long) i, typed);
        case Double d -> {
          if (typed) {
            u32(GgufFile.ValueType.FLOAT64.ordinal());
          }
          u64(Double.doubleToLongBits(d));
        }
        case Boolean bool -> {
          if (typed) {
            u32(GgufFile.ValueType.BOOL.ordinal());
          }
          out.write(bool ? 1 : 0);
        }
        case String s -> {
          if (typed) {
            u32(GgufFile.ValueType.STRING.ordinal());
          }
          string(s);
        }
        case List<?> list -> {
          u32(GgufFile.ValueType.ARRAY.ordinal());
          Object first = list.isEmpty() ? "" : list.getFirst();
          GgufFile.ValueType element = switch (first) {
            case Long l -> GgufFile.ValueType.INT64;
            case Integer i -> GgufFile.ValueType.INT64;
            case Double d -> GgufFile.ValueType.FLOAT64;
            case Boolean bool -> GgufFile.ValueType.BOOL;
            default -> GgufFile.ValueType.STRING;
          };
          u32(element.ordinal());
          u64(list.size());
          for (Object o : list) {
            value(o, false);
          }
        }
        default -> throw new IllegalArgumentException("no GGUF value for " + v);
      }
    }
  }

  /** The tensor {@code name}'s bytes of {@code file}, for comparisons. */
  static MemorySegment data(GgufFile f, String name) {
    return f.tensors().stream().filter(t -> t.name().equals(name)).findFirst().orElseThrow()
        .data();
  }

  /**
   * Code {@code in} of a row of {@code block_q4_K} at {@code rowAt}, as ggml's {@code
   * dequantize_row_q4_K} reads it: super-blocks of 144 bytes (fp16 d, fp16 dmin, 12 bytes of
   * scales, 128 of qs); each 64 weights take 32 bytes of qs, the first 32 their low nibbles,
   * the next 32 their high nibbles.
   */
  public static int q4kCode(MemorySegment data, long rowAt, int in) {
    int within = in % 256;
    long qs = rowAt + (long) (in / 256) * 144 + 16 + 32L * (within / 64);
    int q = data.get(ValueLayout.JAVA_BYTE, qs + within % 32) & 0xff;
    return within % 64 < 32 ? q & 15 : q >>> 4;
  }
}
