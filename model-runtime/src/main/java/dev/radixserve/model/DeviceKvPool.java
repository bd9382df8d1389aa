package dev.radixserve.model;

import dev.radixserve.model.graph.BlockOpsGraph;
import dev.radixserve.model.graph.GraphDtype;
import dev.radixserve.model.ort.Allocator;
import dev.radixserve.model.ort.ElementType;
import dev.radixserve.model.ort.IoBinding;
import dev.radixserve.model.ort.MemoryInfo;
import dev.radixserve.model.ort.OrtSession;
import dev.radixserve.model.ort.OrtValue;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * The paged KV cache in memory of an ONNX Runtime allocator: device memory on CUDA, the CPU
 * allocator's memory on the CPU (where the test suite runs the same code). Per layer one key and
 * one value tensor {@code [numBlocks, blockSize, heads, headDim]} of the graph's dtype, allocated
 * once. The host never reads or writes it: copy-on-write of a partial block and clearing run as
 * tiny in-place graphs ({@link BlockOpsGraph}) on the pool's own device, so only block and slot
 * indices cross the bus.
 *
 * <p>As a {@link KvBlockIo} (the cache tiers below the pool) it moves one whole block to and from
 * host buffers through two more graphs, read and write, with the host buffer bound as the read's
 * outputs and the write's inputs: on CUDA ONNX Runtime does the device-to-host and host-to-device
 * copies itself. Export runs on the engine thread; import on the tiers' loader thread, on its own
 * session and binding, while steps run (it writes only a block no step touches).
 *
 * <pre>
 *   cache c = 2 * layer (keys) or 2 * layer + 1 (values)
 *   position p of a sequence: block table[p / B], slot p % B
 * </pre>
 */
public final class DeviceKvPool implements KvBlockIo, AutoCloseable {

  /** Blocks cleared per run of the zero graph (bounds its temporary row tensor). */
  private static final int ZERO_CHUNK_BLOCKS = 256;

  private final int blockSize;
  private final int numBlocks;
  private final int heads;
  private final int headDim;
  private final GraphDtype dtype;
  private final OrtValue[] caches;
  private final OrtSession copySession;
  private final OrtSession zeroSession;
  private final IoBinding copyBinding;
  private final IoBinding zeroBinding;
  private final OrtSession readSession;
  private final OrtSession writeSession;
  private final IoBinding readBinding;
  private final IoBinding writeBinding;
  private final MemoryInfo host;
  private long indexBytes;

  private DeviceKvPool(ModelShape config, int blockSize, int numBlocks, GraphDtype dtype,
      Allocator allocator, Function<byte[], OrtSession> sessions, List<AutoCloseable> opened) {
    this.blockSize = blockSize;
    this.numBlocks = numBlocks;
    this.heads = config.kvHeads();
    this.headDim = config.headDim();
    this.dtype = dtype;
    int count = 2 * config.nLayer();
    caches = new OrtValue[count];
    for (int c = 0; c < count; c++) {
      caches[c] = Resources.track(opened,
          allocator.tensor(dtype.element(), numBlocks, blockSize, heads, headDim));
    }
    host = Resources.track(opened, MemoryInfo.cpu());
    copySession = Resources.track(opened,
        sessions.apply(BlockOpsGraph.copy(count, blockSize, heads, headDim, dtype)));
    zeroSession = Resources.track(opened,
        sessions.apply(BlockOpsGraph.zero(count, blockSize, heads, headDim, dtype)));
    copyBinding = Resources.track(opened, IoBinding.create(copySession));
    zeroBinding = Resources.track(opened, IoBinding.create(zeroSession));
    readSession = Resources.track(opened,
        sessions.apply(BlockOpsGraph.read(count, blockSize, heads, headDim, dtype)));
    writeSession = Resources.track(opened,
        sessions.apply(BlockOpsGraph.write(count, blockSize, heads, headDim, dtype)));
    readBinding = Resources.track(opened, IoBinding.create(readSession));
    writeBinding = Resources.track(opened, IoBinding.create(writeSession));
    for (int c = 0; c < count; c++) {
      for (IoBinding b : List.of(copyBinding, zeroBinding, writeBinding)) {
        b.bindInput(BlockOpsGraph.cache(c), caches[c]);
        b.bindOutput(BlockOpsGraph.cacheOut(c), caches[c]); // in place
      }
      readBinding.bindInput(BlockOpsGraph.cache(c), caches[c]);
    }
  }

  /**
   * A pool of {@code numBlocks} blocks, cleared to zero.
   *
   * @param allocator where the caches live (the model session's device allocator)
   * @param sessions makes a session on the same device as the model's
   */
  public static DeviceKvPool create(ModelShape config, int blockSize, int numBlocks,
      GraphDtype dtype, Allocator allocator, Function<byte[], OrtSession> sessions) {
    if (blockSize <= 0 || numBlocks <= 0) {
      throw new IllegalArgumentException("a KV pool needs positive block size and count, got "
          + blockSize + " and " + numBlocks);
    }
    List<AutoCloseable> opened = new ArrayList<>();
    try {
      DeviceKvPool pool = new DeviceKvPool(config, blockSize, numBlocks, dtype, allocator,
          sessions, opened);
      for (int first = 0; first < numBlocks; first += ZERO_CHUNK_BLOCKS) {
        pool.zeroBlocks(first, Math.min(ZERO_CHUNK_BLOCKS, numBlocks - first));
      }
      return pool;
    } catch (RuntimeException e) {
      Resources.closeAll(opened.reversed(), e);
      throw e;
    }
  }

  /** Bytes one block takes over all layers, keys and values. */
  public static long bytesPerBlock(ModelShape config, int blockSize, GraphDtype dtype) {
    return 2L * config.nLayer() * blockSize * config.kvWidth() * dtype.bytes();
  }

  /** Blocks that fit in a budget; at least one must fit. */
  public static int blocksFor(ModelShape config, int blockSize, GraphDtype dtype,
      long budgetBytes) {
    return KvPool.blocksOf(bytesPerBlock(config, blockSize, dtype), budgetBytes);
  }

  public int blockSize() {
    return blockSize;
  }

  public int numBlocks() {
    return numBlocks;
  }

  public GraphDtype dtype() {
    return dtype;
  }

  /** Layer {@code layer}'s key cache tensor. */
  public OrtValue keys(int layer) {
    return caches[2 * layer];
  }

  public OrtValue values(int layer) {
    return caches[2 * layer + 1];
  }

  /** Host bytes of index tensors sent to the pool's device so far (copies and clears). */
  public long indexBytes() {
    return indexBytes;
  }

  /**
   * Copies slots {@code [0, slots)} of block {@code src} into block {@code dst}, keys and values
   * of every layer, on the pool's device (copy-on-write of a partly matched cached block).
   */
  public void copyBlock(int src, int dst, int slots) {
    if (slots < 0 || slots > blockSize) {
      throw new IllegalArgumentException("copy of " + slots + " slots, block size " + blockSize);
    }
    requireBlock(src);
    requireBlock(dst);
    if (slots == 0) {
      return;
    }
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment from = rows(arena, src, 1, slots);
      MemorySegment to = rows(arena, dst, 1, slots);
      try (OrtValue s = OrtValue.wrap(host, from, ElementType.INT64, slots, 2);
          OrtValue d = OrtValue.wrap(host, to, ElementType.INT64, slots, 2)) {
        copyBinding.bindInput(BlockOpsGraph.SRC, s);
        copyBinding.bindInput(BlockOpsGraph.DST, d);
        copyBinding.run();
        copyBinding.synchronizeOutputs();
        indexBytes += from.byteSize() + to.byteSize();
      }
    }
  }

  /** Sets every slot of blocks {@code [first, first + count)} to zero, on the pool's device. */
  public void zeroBlocks(int first, int count) {
    requireBlock(first);
    requireBlock(first + count - 1);
    int n = count * blockSize;
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment rows = rows(arena, first, count, blockSize);
      MemorySegment shape = arena.allocateFrom(ValueLayout.JAVA_LONG, n, heads, headDim);
      try (OrtValue r = OrtValue.wrap(host, rows, ElementType.INT64, n, 2);
          OrtValue sh = OrtValue.wrap(host, shape, ElementType.INT64, 3)) {
        zeroBinding.bindInput(BlockOpsGraph.ROWS, r);
        zeroBinding.bindInput(BlockOpsGraph.ROW_SHAPE, sh);
        zeroBinding.run();
        zeroBinding.synchronizeOutputs();
        indexBytes += rows.byteSize() + shape.byteSize();
      }
    }
  }

  @Override
  public long blockBytes() {
    return caches.length * cacheBlockBytes();
  }

  /**
   * Copies block {@code block} of every cache into {@code dst} (host memory), cache after cache:
   * the {@link KvBlockIo} layout, since cache {@code c} is layer {@code c / 2}'s keys or values.
   */
  @Override
  public void exportBlock(int block, MemorySegment dst) {
    runOnBlock(readBinding, BlockOpsGraph.BLOCK, new long[] {1}, block, dst, true);
  }

  /** Overwrites block {@code block} of every cache from {@code src} (host memory). */
  @Override
  public void importBlock(int block, MemorySegment src) {
    runOnBlock(writeBinding, BlockOpsGraph.BLOCK_INDEX, new long[] {1, 1}, block, src, false);
  }

  /**
   * Runs the read or write graph on one block: its index bound as {@code indexName} of shape
   * {@code indexShape}, cache {@code c}'s part of {@code buffer} bound as {@code block_c}, an
   * output of the read graph ({@code out}) or an input of the write graph.
   */
  private void runOnBlock(IoBinding binding, String indexName, long[] indexShape, int block,
      MemorySegment buffer, boolean out) {
    requireBlock(block);
    requireBuffer(buffer);
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment index = arena.allocateFrom(ValueLayout.JAVA_LONG, block);
      List<AutoCloseable> bound = new ArrayList<>();
      try (OrtValue i = OrtValue.wrap(host, index, ElementType.INT64, indexShape)) {
        binding.bindInput(indexName, i);
        for (int c = 0; c < caches.length; c++) {
          OrtValue v = blockValue(buffer, c);
          bound.add(v);
          if (out) {
            binding.bindOutput(BlockOpsGraph.block(c), v);
          } else {
            binding.bindInput(BlockOpsGraph.block(c), v);
          }
        }
        binding.run();
        binding.synchronizeOutputs();
      } finally {
        Resources.closeAll(bound, null);
      }
    }
  }

  private long cacheBlockBytes() {
    return (long) blockSize * heads * headDim * dtype.bytes();
  }

  /** Cache {@code c}'s part of a flat block buffer, as a tensor {@code [1, B, H, D]}. */
  private OrtValue blockValue(MemorySegment buffer, int c) {
    long bytes = cacheBlockBytes();
    return OrtValue.wrap(host, buffer.asSlice(c * bytes, bytes), dtype.element(), 1, blockSize,
        heads, headDim);
  }

  private void requireBuffer(MemorySegment buffer) {
    if (buffer.byteSize() < blockBytes()) {
      throw new IllegalArgumentException("a block of this pool takes " + blockBytes()
          + " bytes, the buffer has " + buffer.byteSize());
    }
  }

  /** (block, slot) pairs for slots {@code [0, slots)} of {@code count} blocks from {@code first}. */
  private static MemorySegment rows(Arena arena, int first, int count, int slots) {
    MemorySegment pairs = arena.allocate((long) count * slots * 2 * Long.BYTES, 8);
    long i = 0;
    for (int b = first; b < first + count; b++) {
      for (int s = 0; s < slots; s++) {
        pairs.setAtIndex(ValueLayout.JAVA_LONG, i++, b);
        pairs.setAtIndex(ValueLayout.JAVA_LONG, i++, s);
      }
    }
    return pairs;
  }

  private void requireBlock(int block) {
    if (block < 0 || block >= numBlocks) {
      throw new IllegalArgumentException("block id " + block + " outside [0, " + numBlocks + ")");
    }
  }

  @Override
  public void close() {
    List<AutoCloseable> owned = new ArrayList<>(List.of(copyBinding, zeroBinding, readBinding,
        writeBinding, copySession, zeroSession, readSession, writeSession));
    owned.addAll(List.of(caches));
    owned.add(host);
    Resources.closeAll(owned, null);
  }
}
