package dev.radixserve.model.tokenizer;

import java.util.Arrays;

/** A growable int array: token ids without boxing. */
final class IntBuffer {

  private int[] values;
  private int size;

  IntBuffer(int capacity) {
    values = new int[Math.max(capacity, 4)];
  }

  void add(int v) {
    if (size == values.length) {
      values = Arrays.copyOf(values, size * 2);
    }
    values[size++] = v;
  }

  void addAll(int[] vs) {
    if (size + vs.length > values.length) {
      values = Arrays.copyOf(values, Math.max(size * 2, size + vs.length));
    }
    System.arraycopy(vs, 0, values, size, vs.length);
    size += vs.length;
  }

  int size() {
    return size;
  }

  int[] toArray() {
    return Arrays.copyOf(values, size);
  }
}
