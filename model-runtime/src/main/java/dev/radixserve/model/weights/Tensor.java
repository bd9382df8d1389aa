package dev.radixserve.model.weights;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;

/**
 * A named weight tensor over memory its {@link GptWeights} owns (a heap array, an arena, or a
 * memory-mapped safetensors file). Row-major, little-endian.
 *
 * <p>With a {@link Decoder}, {@code data} holds the rows in another format's blocks (a GGUF
 * file's quantized types, mapped as they are) and the elements are the decoder's floats
 * ({@code dtype} F32): whoever needs numbers reads them a row at a time ({@link #readRow}), so
 * no float copy of the whole tensor is ever made unless it is to be served as floats.
 *
 * @param decoder null for plain F32/F16/BF16/I32 data
 */
public record Tensor(String name, DType dtype, long[] shape, MemorySegment data,
    Decoder decoder) {

  /**
   * Rows stored in blocks of a format the run path does not take as they are. A row is the last
   * dimension ({@code k} elements); row {@code r} of the tensor may be stored at another place of
   * {@code data} (a decoder may reorder rows, e.g. llama.cpp's permuted q/k rows).
   */
  public interface Decoder {

    /** Bytes {@code rows} rows of {@code k} elements take in {@code data}. */
    long bytes(long rows, long k);

    /** Row {@code row} of the tensor into {@code out} ({@code k} floats). */
    void decodeRow(MemorySegment data, long row, float[] out);

    /**
     * Whether threads may decode rows at once: false for a decoder that keeps the rows it
     * decoded last for the next call (a file's columns read as rows).
     */
    default boolean rowsInParallel() {
      return true;
    }
  }

  private static final ValueLayout.OfFloat F32_LE =
      ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);
  private static final ValueLayout.OfShort U16_LE =
      ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);
  private static final ValueLayout.OfInt I32_LE =
      ValueLayout.JAVA_INT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);

  /** A plain tensor: {@code data} holds its elements in {@code dtype}. */
  public Tensor(String name, DType dtype, long[] shape, MemorySegment data) {
    this(name, dtype, shape, data, null);
  }

  public Tensor {
    shape = shape.clone();
    if (decoder != null && dtype != DType.F32) {
      throw new IllegalArgumentException("tensor " + name + " decodes to floats, not " + dtype);
    }
    long expected = decoder == null ? elementCount(shape) * dtype.bytes()
        : decoder.bytes(elementCount(shape) / rowLength(shape), rowLength(shape));
    if (data.byteSize() != expected) {
      throw new IllegalArgumentException(
          "tensor " + name + " " + Arrays.toString(shape) + " " + dtype + " needs " + expected
              + " bytes, has " + data.byteSize());
    }
  }

  public static long elementCount(long[] shape) {
    long n = 1;
    for (long d : shape) {
      n *= d;
    }
    return n;
  }

  public long elementCount() {
    return elementCount(shape);
  }

  private static long rowLength(long[] shape) {
    return shape.length == 0 ? 1 : Math.max(1, shape[shape.length - 1]);
  }

  /** Elements per row: the last dimension. */
  public int rowLength() {
    return Math.toIntExact(rowLength(shape));
  }

  /** Row {@code r} (the last dimension's {@code out.length} elements) as floats. */
  /**
   * Whether {@link #readRow} may be called from several threads at once: the decoder allows it and
   * the data is not confined to one thread (a confined arena's segment is its owner's alone).
   */
  public boolean rowsInParallel() {
    return (decoder == null || decoder.rowsInParallel()) && data.isAccessibleBy(ANY_OTHER_THREAD);
  }

  /** Never started: a thread other than every segment owner's, to ask about confinement. */
  private static final Thread ANY_OTHER_THREAD = Thread.ofPlatform().unstarted(() -> { });

  public void readRow(long r, float[] out) {
    if (decoder != null) {
      decoder.decodeRow(data, r, out);
      return;
    }
    long at = r * out.length;
    for (int i = 0; i < out.length; i++) {
      out[i] = get(at + i);
    }
  }

  /**
   * Drops rows [{@code from}, {@code to}) from this process's resident set where the data is a
   * file mapping ({@code madvise MADV_DONTNEED} through {@link MemorySegment#unload}); reading
   * them again faults them back in from the file. A reader going through a large table row by
   * row calls it behind itself, so the table's file pages never all count at once (the page
   * cache keeps them either way). Plain tensors only: a decoder may store rows elsewhere.
   */
  public void releaseRows(long from, long to) {
    if (decoder == null && data.isMapped() && to > from) {
      long row = rowLength() * (long) dtype.bytes();
      data.asSlice(from * row, (to - from) * row).unload();
    }
  }

  /**
   * Element i as a float, widening F16/BF16 (a decoded tensor decodes i's whole row: read those
   * with {@link #readRow}).
   */
  public float get(long i) {
    if (decoder != null) {
      float[] row = new float[rowLength()];
      decoder.decodeRow(data, i / row.length, row);
      return row[(int) (i % row.length)];
    }
    return switch (dtype) {
      case F32 -> data.getAtIndex(F32_LE, i);
      case F16 -> Float.float16ToFloat(data.getAtIndex(U16_LE, i));
      case BF16 -> Float.intBitsToFloat((data.getAtIndex(U16_LE, i) & 0xffff) << 16);
      case I32 -> throw new IllegalStateException("tensor " + name + " holds I32 integers, not"
          + " floats");
    };
  }

  /** Element i of an I32 tensor. */
  public int getInt(long i) {
    if (dtype != DType.I32) {
      throw new IllegalStateException("tensor " + name + " holds " + dtype + ", not I32");
    }
    return data.getAtIndex(I32_LE, i);
  }

  /** A float copy of the whole tensor (for references and tests; the run path avoids it). */
  public float[] toFloatArray() {
    long n = elementCount();
    if (n > Integer.MAX_VALUE) {
      throw new IllegalStateException("tensor " + name + " has " + n + " elements, too many for an array");
    }
    float[] out = new float[(int) n];
    float[] row = new float[rowLength()];
    for (int r = 0; r < out.length / row.length; r++) {
      readRow(r, row);
      System.arraycopy(row, 0, out, r * row.length, row.length);
    }
    return out;
  }
}
