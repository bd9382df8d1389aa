package dev.radixserve.model;

import dev.radixserve.model.graph.KvDtype;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The paged KV cache in host memory: per layer one key and one value tensor of
 * {@code [numBlocks, blockSize, kvHeads, lastDim]} in the pool's {@link KvDtype} (fp32 by
 * default; lastDim is headDim, or for int8/fp8 the bytes of a scale and headDim codes), allocated
 * once and owned here.
 *
 * <pre>
 *   position p of a sequence lives in block blockTable[p / B], slot p % B:
 *   byte offset (block * B + slot) * kvHeads * headRowBytes in each layer's key and value tensor
 * </pre>
 */
public final class KvPool implements KvBlockIo, AutoCloseable {

  private final ModelShape config;
  private final KvDtype dtype;
  private final int blockSize;
  private final int numBlocks;
  private final long rowBytes;
  private final Arena arena;
  private final MemorySegment[] keys;
  private final MemorySegment[] values;

  private KvPool(ModelShape config, int blockSize, int numBlocks, KvDtype dtype) {
    if (blockSize <= 0) {
      throw new IllegalArgumentException("block size must be positive, got " + blockSize);
    }
    if (numBlocks <= 0) {
      throw new IllegalArgumentException("a KV pool needs at least one block, got " + numBlocks);
    }
    this.config = config;
    this.dtype = dtype;
    this.blockSize = blockSize;
    this.numBlocks = numBlocks;
    this.rowBytes = rowBytes(config, dtype);
    this.arena = Arena.ofShared();
    this.keys = new MemorySegment[config.nLayer()];
    this.values = new MemorySegment[config.nLayer()];
    long layerBytes = (long) numBlocks * blockSize * rowBytes;
    for (int i = 0; i < config.nLayer(); i++) {
      // Zeroed: slots never written read as 0. Huge pages: a step reads blocks all over it.
      keys[i] = HugePages.allocate(arena, layerBytes);
      values[i] = HugePages.allocate(arena, layerBytes);
    }
  }

  /** A pool of exactly {@code numBlocks} fp32 blocks. */
  public static KvPool ofBlocks(ModelShape config, int blockSize, int numBlocks) {
    return ofBlocks(config, blockSize, numBlocks, KvDtype.FLOAT32);
  }

  /** A pool of exactly {@code numBlocks} blocks holding {@code dtype}. */
  public static KvPool ofBlocks(ModelShape config, int blockSize, int numBlocks, KvDtype dtype) {
    return new KvPool(config, blockSize, numBlocks, dtype);
  }

  /** As many fp32 blocks as fit in {@code budgetBytes}. */
  public static KvPool forBudget(ModelShape config, int blockSize, long budgetBytes) {
    return forBudget(config, blockSize, budgetBytes, KvDtype.FLOAT32);
  }

  /** As many blocks of {@code dtype} as fit in {@code budgetBytes}. */
  public static KvPool forBudget(ModelShape config, int blockSize, long budgetBytes,
      KvDtype dtype) {
    return new KvPool(config, blockSize, blocksFor(config, blockSize, budgetBytes, dtype), dtype);
  }

  /** fp32 blocks that fit in a budget; at least one must fit. */
  public static int blocksFor(ModelShape config, int blockSize, long budgetBytes) {
    return blocksFor(config, blockSize, budgetBytes, KvDtype.FLOAT32);
  }

  /** Blocks of {@code dtype} that fit in a budget; at least one must fit. */
  public static int blocksFor(ModelShape config, int blockSize, long budgetBytes, KvDtype dtype) {
    return blocksOf(bytesPerBlock(config, blockSize, dtype), budgetBytes);
  }

  /** Blocks of {@code per} bytes that fit in {@code budgetBytes}; at least one must fit. */
  static int blocksOf(long per, long budgetBytes) {
    long n = budgetBytes / per;
    if (n < 1) {
      throw new IllegalArgumentException("a KV budget of " + budgetBytes + " bytes holds no block of "
          + per + " bytes");
    }
    return (int) Math.min(n, Integer.MAX_VALUE);
  }

  /** Bytes one fp32 block takes over all layers, keys and values. */
  public static long bytesPerBlock(ModelShape config, int blockSize) {
    return bytesPerBlock(config, blockSize, KvDtype.FLOAT32);
  }

  /** Bytes one block of {@code dtype} takes over all layers, keys and values (scales included). */
  public static long bytesPerBlock(ModelShape config, int blockSize, KvDtype dtype) {
    return 2L * config.nLayer() * blockSize * rowBytes(config, dtype);
  }

  /** Bytes of one slot of one layer's key (or value) tensor. */
  private static long rowBytes(ModelShape config, KvDtype dtype) {
    return config.kvHeads() * dtype.headRowBytes(config.headDim());
  }

  public long bytesPerBlock() {
    return bytesPerBlock(config, blockSize, dtype);
  }

  /** What the pool stores keys and values in. */
  public KvDtype dtype() {
    return dtype;
  }

  public ModelShape config() {
    return config;
  }

  public int blockSize() {
    return blockSize;
  }

  public int numBlocks() {
    return numBlocks;
  }

  /** Layer {@code layer}'s key tensor [numBlocks, B, H, D]. */
  public MemorySegment keys(int layer) {
    return keys[layer];
  }

  public MemorySegment values(int layer) {
    return values[layer];
  }

  /**
   * Copies slots {@code [0, slots)} of block {@code src} into block {@code dst}, keys and values of
   * every layer (copy-on-write of a partly matched cached block).
   */
  public void copyBlock(int src, int dst, int slots) {
    if (slots < 0 || slots > blockSize) {
      throw new IllegalArgumentException("copy of " + slots + " slots, block size " + blockSize);
    }
    long from = slotOffset(src, 0);
    long to = slotOffset(dst, 0);
    long bytes = slots * rowBytes;
    for (int layer = 0; layer < keys.length; layer++) {
      MemorySegment.copy(keys[layer], from, keys[layer], to, bytes);
      MemorySegment.copy(values[layer], from, values[layer], to, bytes);
    }
  }

  @Override
  public long blockBytes() {
    return bytesPerBlock();
  }

  @Override
  public void exportBlock(int block, MemorySegment dst) {
    long from = slotOffset(block, 0);
    long bytes = blockSize * rowBytes;
    checkBuffer(dst);
    for (int layer = 0; layer < keys.length; layer++) {
      MemorySegment.copy(keys[layer], from, dst, 2L * layer * bytes, bytes);
      MemorySegment.copy(values[layer], from, dst, (2L * layer + 1) * bytes, bytes);
    }
  }

  @Override
  public void importBlock(int block, MemorySegment src) {
    long to = slotOffset(block, 0);
    long bytes = blockSize * rowBytes;
    checkBuffer(src);
    for (int layer = 0; layer < keys.length; layer++) {
      MemorySegment.copy(src, 2L * layer * bytes, keys[layer], to, bytes);
      MemorySegment.copy(src, (2L * layer + 1) * bytes, values[layer], to, bytes);
    }
  }

  private void checkBuffer(MemorySegment buffer) {
    if (buffer.byteSize() < bytesPerBlock()) {
      throw new IllegalArgumentException("a block of this pool takes " + bytesPerBlock()
          + " bytes, the buffer has " + buffer.byteSize());
    }
  }

  /** Reads one cached row as floats, every kv head's values in turn (tests, debugging). */
  public float[] keyRow(int layer, int block, int slot) {
    return row(keys[layer], block, slot);
  }

  public float[] valueRow(int layer, int block, int slot) {
    return row(values[layer], block, slot);
  }

  private float[] row(MemorySegment cache, int block, int slot) {
    int d = config.headDim();
    float[] row = new float[config.kvHeads() * d];
    long at = slotOffset(block, slot);
    for (int h = 0; h < config.kvHeads(); h++) {
      for (int i = 0; i < d; i++) {
        row[h * d + i] = dtype.decode(cache, at + h * dtype.headRowBytes(d), i);
      }
    }
    return row;
  }

  private long slotOffset(int block, int slot) {
    if (block < 0 || block >= numBlocks) {
      throw new IllegalArgumentException("block id " + block + " outside [0, " + numBlocks + ")");
    }
    return ((long) block * blockSize + slot) * rowBytes;
  }

  @Override
  public void close() {
    if (arena.scope().isAlive()) {
      arena.close();
    }
  }
}
