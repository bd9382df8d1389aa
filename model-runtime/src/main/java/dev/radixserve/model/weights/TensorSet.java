package dev.radixserve.model.weights;

import java.lang.foreign.Arena;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * A family's weights by canonical name, checked against the shapes its config implies, over
 * memory an arena owns: what {@link GptWeights} and {@link LlamaWeights} share. Closing releases
 * (or unmaps) the memory.
 */
public abstract class TensorSet implements AutoCloseable {

  private final Map<String, Tensor> tensors;
  private final Arena arena;

  /**
   * @param expected every name the family needs, with its shape
   * @param arena owner of the tensors' memory, closed with them (may be null for heap)
   */
  /** nn.Linear's shapes: {@code prefix.weight} [out, in] and, with a bias, {@code prefix.bias} [out]. */
  static void linear(Map<String, long[]> shapes, String prefix, long out, long in, boolean bias) {
    shapes.put(prefix + ".weight", new long[] {out, in});
    if (bias) {
      shapes.put(prefix + ".bias", new long[] {out});
    }
  }

  TensorSet(Map<String, Tensor> tensors, Map<String, long[]> expected, Arena arena) {
    this.tensors = new LinkedHashMap<>(tensors);
    this.arena = arena;
    expected.forEach((name, shape) -> shapeProblem(this.tensors, name, shape).ifPresent(p -> {
      throw new IllegalArgumentException(p);
    }));
  }

  /** The tensor of one canonical name; an {@link IllegalArgumentException} when there is none. */
  public Tensor tensor(String name) {
    Tensor t = tensors.get(name);
    if (t == null) {
      throw new IllegalArgumentException("no tensor named " + name);
    }
    return t;
  }

  public Map<String, Tensor> tensors() {
    return Collections.unmodifiableMap(tensors);
  }

  /** What is wrong with tensor {@code name} of {@code tensors} given its expected shape, if anything. */
  static Optional<String> shapeProblem(Map<String, Tensor> tensors, String name, long[] shape) {
    Tensor t = tensors.get(name);
    if (t == null) {
      return Optional.of("missing tensor " + name);
    }
    if (!Arrays.equals(t.shape(), shape)) {
      return Optional.of("tensor " + name + " has shape " + Arrays.toString(t.shape())
          + ", expected " + Arrays.toString(shape));
    }
    return Optional.empty();
  }

  public void close() {
    if (arena != null && arena.scope().isAlive()) {
      arena.close();
    }
  }
}
