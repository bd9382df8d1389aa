package dev.radixserve.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.radixserve.model.graph.GraphDtype;
import dev.radixserve.model.ort.Allocator;
import dev.radixserve.model.ort.MemoryInfo;
import dev.radixserve.model.ort.OrtEnv;
import dev.radixserve.model.ort.OrtSession;
import dev.radixserve.model.ort.OrtValue;
import dev.radixserve.model.ort.SessionOptions;
import dev.radixserve.model.graph.BlockOpsGraph;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The device pool with ONNX Runtime's CPU allocator: clearing and copy-on-write run as in-place
 * graphs and must move exactly the addressed bytes, bit for bit.
 */
class DeviceKvPoolTest {

  static final ModelConfig CONFIG = new ModelConfig(2, 2, 16, 64, 31, 1e-5, "gelu_new");
  static final int BLOCK = 4;
  static final int BLOCKS = 6;

  interface PoolTest {
    void run(DeviceKvPool pool);
  }

  static void withPool(GraphDtype dtype, PoolTest test) {
    try (OrtEnv env = OrtEnv.create("pool-test");
        MemoryInfo cpu = MemoryInfo.cpu();
        SessionOptions options = SessionOptions.create();
        OrtSession owner = OrtSession.create(env,
            BlockOpsGraph.copy(1, BLOCK, 2, 8, dtype), options);
        Allocator allocator = Allocator.of(owner, cpu);
        DeviceKvPool pool = DeviceKvPool.create(CONFIG, BLOCK, BLOCKS, dtype, allocator,
            graph -> OrtSession.create(env, graph, options))) {
      test.run(pool);
    }
  }

  /** Every cache's bytes: keys and values of each layer. */
  static byte[][] snapshot(DeviceKvPool pool) {
    byte[][] all = new byte[2 * CONFIG.nLayer()][];
    for (int l = 0; l < CONFIG.nLayer(); l++) {
      all[2 * l] = pool.keys(l).data().toArray(ValueLayout.JAVA_BYTE);
      all[2 * l + 1] = pool.values(l).data().toArray(ValueLayout.JAVA_BYTE);
    }
    return all;
  }

  static void fillRandom(DeviceKvPool pool, long seed) {
    Random random = new Random(seed);
    for (int l = 0; l < CONFIG.nLayer(); l++) {
      for (OrtValue v : new OrtValue[] {pool.keys(l), pool.values(l)}) {
        MemorySegment data = v.data();
        for (long i = 0; i < data.byteSize(); i++) {
          data.set(ValueLayout.JAVA_BYTE, i, (byte) random.nextInt());
        }
      }
    }
  }

  static long rowBytes(GraphDtype dtype) {
    return (long) CONFIG.nEmbd() * dtype.bytes();
  }

  @ParameterizedTest
  @EnumSource(GraphDtype.class)
  void aNewPoolIsZero(GraphDtype dtype) {
    withPool(dtype, pool -> {
      for (byte[] cache : snapshot(pool)) {
        assertArrayEquals(new byte[cache.length], cache);
      }
    });
  }

  @ParameterizedTest
  @EnumSource(GraphDtype.class)
  void copyOnWriteMovesExactlyTheSlotsAsked(GraphDtype dtype) {
    withPool(dtype, pool -> {
      fillRandom(pool, 11);
      byte[][] before = snapshot(pool);
      pool.copyBlock(4, 1, 3);
      byte[][] after = snapshot(pool);
      long row = rowBytes(dtype);
      for (int c = 0; c < before.length; c++) {
        byte[] expected = before[c].clone();
        // slots 0..2 of block 4 → slots 0..2 of block 1; everything else untouched
        System.arraycopy(before[c], (int) (4 * BLOCK * row), expected, (int) (BLOCK * row),
            (int) (3 * row));
        assertArrayEquals(expected, after[c], "cache " + c);
      }
    });
  }

  @ParameterizedTest
  @EnumSource(GraphDtype.class)
  void zeroingClearsExactlyTheBlocksAsked(GraphDtype dtype) {
    withPool(dtype, pool -> {
      fillRandom(pool, 12);
      byte[][] before = snapshot(pool);
      pool.zeroBlocks(2, 3);
      byte[][] after = snapshot(pool);
      long block = BLOCK * rowBytes(dtype);
      for (int c = 0; c < before.length; c++) {
        byte[] expected = before[c].clone();
        java.util.Arrays.fill(expected, (int) (2 * block), (int) (5 * block), (byte) 0);
        assertArrayEquals(expected, after[c], "cache " + c);
      }
    });
  }

  @ParameterizedTest
  @EnumSource(GraphDtype.class)
  void exportCopiesOneBlockOfEveryCacheInTheFlatLayout(GraphDtype dtype) {
    withPool(dtype, pool -> {
      fillRandom(pool, 13);
      byte[][] before = snapshot(pool);
      long block = BLOCK * rowBytes(dtype);
      assertEquals(2L * CONFIG.nLayer() * block, pool.blockBytes());
      try (Arena arena = Arena.ofConfined()) {
        MemorySegment dst = arena.allocate(pool.blockBytes() + 8); // longer buffers are fine
        dst.fill((byte) 0x5a);
        pool.exportBlock(3, dst);
        for (int c = 0; c < before.length; c++) {
          // layer l's keys, then its values: cache c = 2l (keys), 2l + 1 (values)
          assertArrayEquals(java.util.Arrays.copyOfRange(before[c], (int) (3 * block),
              (int) (4 * block)), dst.asSlice(c * block, block).toArray(ValueLayout.JAVA_BYTE),
              "cache " + c);
        }
        assertEquals((byte) 0x5a, dst.get(ValueLayout.JAVA_BYTE, pool.blockBytes()));
        assertArrayEquals(before, snapshot(pool), "export changes nothing");
      }
    });
  }

  @ParameterizedTest
  @EnumSource(GraphDtype.class)
  void importOverwritesExactlyTheBlockAsked(GraphDtype dtype) {
    withPool(dtype, pool -> {
      fillRandom(pool, 14);
      byte[][] before = snapshot(pool);
      long block = BLOCK * rowBytes(dtype);
      try (Arena arena = Arena.ofConfined()) {
        MemorySegment src = arena.allocate(pool.blockBytes());
        Random random = new Random(15);
        for (long i = 0; i < src.byteSize(); i++) {
          src.set(ValueLayout.JAVA_BYTE, i, (byte) random.nextInt());
        }
        pool.importBlock(2, src);
        byte[][] after = snapshot(pool);
        for (int c = 0; c < before.length; c++) {
          byte[] expected = before[c].clone();
          System.arraycopy(src.asSlice(c * block, block).toArray(ValueLayout.JAVA_BYTE), 0,
              expected, (int) (2 * block), (int) block);
          assertArrayEquals(expected, after[c], "cache " + c);
        }
        // and the round trip: block 2 exported again is the buffer imported
        MemorySegment back = arena.allocate(pool.blockBytes());
        pool.exportBlock(2, back);
        assertEquals(-1L, back.mismatch(src));
        assertThrows(IllegalArgumentException.class, () -> pool.importBlock(BLOCKS, src));
        assertThrows(IllegalArgumentException.class,
            () -> pool.exportBlock(0, arena.allocate(pool.blockBytes() - 1)));
      }
    });
  }

  @ParameterizedTest
  @EnumSource(GraphDtype.class)
  void blockIdsOutsideThePoolAreRefused(GraphDtype dtype) {
    withPool(dtype, pool -> {
      assertThrows(IllegalArgumentException.class, () -> pool.copyBlock(BLOCKS, 0, 1));
      assertThrows(IllegalArgumentException.class, () -> pool.copyBlock(0, 1, BLOCK + 1));
      assertThrows(IllegalArgumentException.class, () -> pool.zeroBlocks(BLOCKS - 1, 2));
    });
  }
}
