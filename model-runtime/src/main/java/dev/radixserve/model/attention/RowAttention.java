package dev.radixserve.model.attention;

import java.lang.foreign.MemorySegment;

/**
 * The inner loop of the CPU paged attention: one query row of one head against the first
 * {@code len} positions of its sequence, read where they lie in the pool.
 *
 * <pre>
 *   position j of the sequence: block table[tableOffset + j / B], slot j % B
 *   its key row for this head:  keyCache byte offset ((block * B + slot) * rowFloats + headOffset) * 4
 *   out = softmax(scale * q · K[0, len)) · V[0, len)            (fp32, max subtracted first)
 * </pre>
 *
 * Implementations are stateless and thread-safe; {@code scores} is the caller's scratch.
 */
interface RowAttention {

  /**
   * @param rowFloats floats per pool slot (kv heads × head size)
   * @param headOffset first float of this head's kv head inside a slot
   * @param scores scratch of at least {@code len} floats
   */
  void attend(MemorySegment query, long queryOffset, MemorySegment keyCache,
      MemorySegment valueCache, int[] table, int tableOffset, int blockSize, int len,
      int rowFloats, int headOffset, int headSize, float scale, float[] scores,
      MemorySegment out, long outOffset);

  /** The Vector API implementation when {@code jdk.incubator.vector} is present, else scalar. */
  static RowAttention best() {
    return VectorSupport.AVAILABLE ? VectorSupport.create() : new ScalarRowAttention();
  }

  /** Whether the JVM was started with {@code --add-modules jdk.incubator.vector}. */
  final class VectorSupport {
    static final boolean AVAILABLE =
        ModuleLayer.boot().findModule("jdk.incubator.vector").isPresent();

    private VectorSupport() {}

    /** Loads the Vector API class only here, so a JVM without the module never links it. */
    static RowAttention create() {
      try {
        return (RowAttention) Class.forName("dev.radixserve.model.attention.VectorRowAttention")
            .getDeclaredConstructor().newInstance();
      } catch (ReflectiveOperationException e) {
        throw new IllegalStateException("cannot load the Vector API attention", e);
      }
    }
  }
}
