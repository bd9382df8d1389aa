package dev.radixserve.model.gguf;

import dev.radixserve.model.weights.ModelLoadException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A GGUF file (or the shards of one, {@code NAME-00001-of-0000N.gguf}) memory-mapped, as
 * llama.cpp's {@code gguf.cpp} and gguf-py's {@code GGUFReader} read it (little-endian, version 2
 * or 3):
 *
 * <pre>
 *   "GGUF"  u32 version  u64 tensor_count  u64 kv_count
 *   kv_count × (string key, u32 value type, value)       string = u64 length + UTF-8 bytes
 *   tensor_count × (string name, u32 n_dims, u64 ne[n_dims], u32 ggml type, u64 offset)
 *   padding to general.alignment (32 when absent)
 *   tensor data; each tensor at data start + offset (a multiple of the alignment)
 * </pre>
 *
 * ne[0] is the innermost dimension (a row's length): a 2-D weight of ne [K, N] is N rows of K.
 * Metadata values are Java objects: Long (every integer type widened, unsigned 64-bit as its bits),
 * Double (FLOAT32 widened exactly, FLOAT64), Boolean, String, and {@link List}s of those. Shards
 * after the first carry the split keys only; their tensors join the first's. The mapping lives as
 * long as the given arena.
 *
 * @param files the file, or every shard in order
 * @param metadata every key-value pair of the first file, in file order
 * @param tensors every tensor of every shard, in file order
 * @param headerHash SHA-256 of the first file's bytes before the tensor data (header, metadata and
 *     tensor infos), hex: part of the cache identity with each file's size and mtime
 */
public record GgufFile(List<Path> files, Map<String, Object> metadata, List<TensorInfo> tensors,
    String headerHash) {

  static final int MAGIC = 0x46554747; // "GGUF" read little-endian
  static final int DEFAULT_ALIGNMENT = 32;
  static final String ALIGNMENT = "general.alignment";
  static final String SPLIT_NO = "split.no";
  static final String SPLIT_COUNT = "split.count";
  static final String SPLIT_TENSORS = "split.tensors.count";
  /** llama.cpp's {@code llama_split_path}: {@code PREFIX-%05d-of-%05d.gguf}. */
  private static final Pattern SHARD = Pattern.compile("(.*)-(\\d{5})-of-(\\d{5})\\.gguf");

  private static final ValueLayout.OfInt U32 =
      ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
  private static final ValueLayout.OfLong U64 =
      ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
  private static final ValueLayout.OfShort U16 =
      ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
  private static final ValueLayout.OfFloat F32 =
      ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
  private static final ValueLayout.OfDouble F64 =
      ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

  public GgufFile {
    files = List.copyOf(files);
    metadata = Collections.unmodifiableMap(new LinkedHashMap<>(metadata));
    tensors = List.copyOf(tensors);
  }

  /**
   * One tensor: its name, ne (innermost first), type, and its bytes (a slice of the mapping).
   *
   * @param file the file (shard) that holds it
   */
  public record TensorInfo(String name, long[] ne, GgmlType type, MemorySegment data, Path file) {

    public TensorInfo {
      ne = ne.clone();
    }

    public long elementCount() {
      long n = 1;
      for (long d : ne) {
        n *= d;
      }
      return n;
    }

    /** The shape as row-major code writes it (outermost first): ne reversed. */
    public long[] shape() {
      long[] s = new long[ne.length];
      for (int i = 0; i < ne.length; i++) {
        s[i] = ne[ne.length - 1 - i];
      }
      return s;
    }
  }

  /** The GGUF value types (gguf-py's {@code GGUFValueType}). */
  enum ValueType {
    UINT8, INT8, UINT16, INT16, UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY, UINT64, INT64,
    FLOAT64
  }

  /**
   * Maps {@code file} and, when its name is the first of a split ({@code -00001-of-0000N}), the
   * shards after it.
   *
   * @throws ModelLoadException naming the file and what is wrong
   */
  public static GgufFile map(Path file, Arena arena) {
    Matcher m = SHARD.matcher(file.getFileName().toString());
    List<Path> paths = new ArrayList<>();
    paths.add(file);
    if (m.matches()) {
      int no = Integer.parseInt(m.group(2));
      int count = Integer.parseInt(m.group(3));
      if (no != 1) {
        throw new ModelLoadException(file, "is shard " + no + " of " + count
            + "; give the first, " + String.format("%s-%05d-of-%05d.gguf", m.group(1), 1, count));
      }
      for (int i = 2; i <= count; i++) {
        Path shard = file.resolveSibling(String.format("%s-%05d-of-%05d.gguf", m.group(1), i,
            count));
        if (!Files.isRegularFile(shard)) {
          throw new ModelLoadException(file, "shard " + shard.getFileName() + " of " + count
              + " is missing");
        }
        paths.add(shard);
      }
    }
    Parsed first = parse(paths.getFirst(), arena);
    List<TensorInfo> tensors = new ArrayList<>(first.tensors());
    checkSplit(first, 0, paths.size());
    for (int i = 1; i < paths.size(); i++) {
      Parsed shard = parse(paths.get(i), arena);
      checkSplit(shard, i, paths.size());
      tensors.addAll(shard.tensors());
    }
    Object total = first.metadata().get(SPLIT_TENSORS);
    if (total != null && ((Number) total).longValue() != tensors.size()) {
      throw new ModelLoadException(file, SPLIT_TENSORS + " is " + total + ", the " + paths.size()
          + " shards hold " + tensors.size() + " tensors");
    }
    Map<String, TensorInfo> seen = new LinkedHashMap<>();
    for (TensorInfo t : tensors) {
      if (seen.put(t.name(), t) != null) {
        throw new ModelLoadException(t.file(), "tensor " + t.name() + " appears twice");
      }
    }
    return new GgufFile(paths, first.metadata(), tensors, first.headerHash());
  }

  private static void checkSplit(Parsed p, int index, int count) {
    Object no = p.metadata().get(SPLIT_NO);
    Object n = p.metadata().get(SPLIT_COUNT);
    if (count == 1 && (n == null || ((Number) n).intValue() <= 1)) {
      return;
    }
    if (no == null || n == null || ((Number) no).intValue() != index
        || ((Number) n).intValue() != count) {
      throw new ModelLoadException(p.file(), "is file " + (index + 1) + " of " + count
          + " by its name, but its " + SPLIT_NO + " / " + SPLIT_COUNT + " say " + no + " / " + n);
    }
  }

  /** What is read of one file. */
  private record Parsed(Path file, Map<String, Object> metadata, List<TensorInfo> tensors,
      String headerHash) {}

  private static Parsed parse(Path file, Arena arena) {
    MemorySegment whole;
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      whole = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size(), arena);
    } catch (IOException e) {
      throw new ModelLoadException(file, "cannot be read: " + e, e);
    }
    Cursor c = new Cursor(file, whole);
    if (whole.byteSize() < 24 || c.u32() != MAGIC) {
      throw new ModelLoadException(file, "is not a GGUF file (no GGUF magic)");
    }
    int version = c.u32();
    if (version != 2 && version != 3) {
      throw new ModelLoadException(file, "GGUF version " + version + " is not supported (2 or 3)");
    }
    long tensorCount = c.count("tensor count");
    long kvCount = c.count("metadata count");
    Map<String, Object> metadata = new LinkedHashMap<>();
    for (long i = 0; i < kvCount; i++) {
      String key = c.string();
      int type = c.u32();
      if (metadata.put(key, c.value(type, key)) != null) {
        throw new ModelLoadException(file, "metadata key " + key + " appears twice");
      }
    }
    long alignment = DEFAULT_ALIGNMENT;
    Object a = metadata.get(ALIGNMENT);
    if (a != null) {
      alignment = ((Number) a).longValue();
      if (alignment <= 0 || Long.bitCount(alignment) != 1) {
        throw new ModelLoadException(file, ALIGNMENT + " " + a + " is not a power of two");
      }
    }
    record Raw(String name, long[] ne, int type, long offset) {}
    List<Raw> raws = new ArrayList<>();
    for (long i = 0; i < tensorCount; i++) {
      String name = c.string();
      int dims = c.u32();
      if (dims < 1 || dims > 4) {
        throw new ModelLoadException(file, "tensor " + name + " has " + dims + " dimensions (1 to 4)");
      }
      long[] ne = new long[dims];
      for (int d = 0; d < dims; d++) {
        ne[d] = c.u64();
        if (ne[d] < 0) {
          throw new ModelLoadException(file, "tensor " + name + " has a negative dimension");
        }
      }
      raws.add(new Raw(name, ne, c.u32(), c.u64()));
    }
    long headerEnd = c.at;
    long dataStart = (headerEnd + alignment - 1) / alignment * alignment;
    List<TensorInfo> tensors = new ArrayList<>();
    for (Raw r : raws) {
      GgmlType type = GgmlType.ofId(r.type());
      if (type == null) {
        throw new ModelLoadException(file, "tensor " + r.name() + " has ggml type " + r.type()
            + ", which this reader does not know");
      }
      long elements = 1;
      for (long d : r.ne()) {
        elements = Math.multiplyExact(elements, d);
      }
      if (r.ne()[0] % type.blockSize() != 0) {
        throw new ModelLoadException(file, "tensor " + r.name() + " rows of " + r.ne()[0]
            + " are not whole " + type + " blocks of " + type.blockSize());
      }
      long bytes = elements / type.blockSize() * type.typeSize();
      if (r.offset() % alignment != 0 || r.offset() < 0
          || dataStart + r.offset() + bytes > whole.byteSize()) {
        throw new ModelLoadException(file, "tensor " + r.name() + " at offset " + r.offset()
            + " (" + bytes + " bytes) is misaligned or runs past the end of the file ("
            + whole.byteSize() + " bytes, data from " + dataStart + ", alignment " + alignment + ")");
      }
      tensors.add(new TensorInfo(r.name(), r.ne(), type,
          whole.asSlice(dataStart + r.offset(), bytes), file));
    }
    return new Parsed(file, metadata, tensors, sha256(whole.asSlice(0, headerEnd)));
  }

  private static String sha256(MemorySegment bytes) {
    try {
      MessageDigest d = MessageDigest.getInstance("SHA-256");
      d.update(bytes.asByteBuffer());
      return HexFormat.of().formatHex(d.digest());
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /** A read position over the mapping; every read checks the bounds. */
  private static final class Cursor {
    private final Path file;
    private final MemorySegment s;
    private long at;

    Cursor(Path file, MemorySegment s) {
      this.file = file;
      this.s = s;
    }

    private void need(long bytes) {
      if (bytes < 0 || at + bytes > s.byteSize()) {
        throw new ModelLoadException(file, "truncated: the header needs " + bytes
            + " bytes at offset " + at + " of " + s.byteSize());
      }
    }

    int u32() {
      need(4);
      int v = s.get(U32, at);
      at += 4;
      return v;
    }

    long u64() {
      need(8);
      long v = s.get(U64, at);
      at += 8;
      return v;
    }

    long count(String what) {
      long n = u64();
      if (n < 0 || n > s.byteSize()) {
        throw new ModelLoadException(file, what + " " + Long.toUnsignedString(n)
            + " cannot fit the file");
      }
      return n;
    }

    String string() {
      long n = count("string length");
      need(n);
      byte[] b = s.asSlice(at, n).toArray(ValueLayout.JAVA_BYTE);
      at += n;
      return new String(b, StandardCharsets.UTF_8);
    }

    Object value(int typeCode, String key) {
      if (typeCode < 0 || typeCode >= ValueType.values().length) {
        throw new ModelLoadException(file, "metadata " + key + " has value type " + typeCode
            + " (0 to 12)");
      }
      ValueType type = ValueType.values()[typeCode];
      switch (type) {
        case UINT8 -> { need(1); return (long) (s.get(ValueLayout.JAVA_BYTE, at++) & 0xff); }
        case INT8 -> { need(1); return (long) s.get(ValueLayout.JAVA_BYTE, at++); }
        case UINT16 -> { need(2); long v = s.get(U16, at) & 0xffff; at += 2; return v; }
        case INT16 -> { need(2); long v = s.get(U16, at); at += 2; return v; }
        case UINT32 -> { return u32() & 0xffffffffL; }
        case INT32 -> { return (long) u32(); }
        case FLOAT32 -> { need(4); double v = s.get(F32, at); at += 4; return v; }
        case BOOL -> {
          need(1);
          byte b = s.get(ValueLayout.JAVA_BYTE, at++);
          if (b != 0 && b != 1) {
            throw new ModelLoadException(file, "metadata " + key + " bool holds " + b);
          }
          return b == 1;
        }
        case STRING -> { return string(); }
        case UINT64, INT64 -> { return u64(); }
        case FLOAT64 -> { need(8); double v = s.get(F64, at); at += 8; return v; }
        case ARRAY -> {
          int element = u32();
          if (element == ValueType.ARRAY.ordinal()) {
            throw new ModelLoadException(file, "metadata " + key + " is an array of arrays");
          }
          long n = count("array length of " + key);
          List<Object> list = new ArrayList<>((int) Math.min(n, 1 << 20));
          for (long i = 0; i < n; i++) {
            list.add(value(element, key));
          }
          return Collections.unmodifiableList(list);
        }
        default -> throw new IllegalStateException(type.toString());
      }
    }
  }

  /** The metadata value of {@code key}, or null. */
  public Object get(String key) {
    return metadata.get(key);
  }

  public Path primary() {
    return files.getFirst();
  }
}
