package dev.radixserve.model.graph;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Each KV dtype's row layout, and its round trip within the format's own rounding. */
class KvDtypeTest {

  private static final int D = 72;

  @Test
  void rowLayouts() {
    assertEquals(256, KvDtype.FLOAT32.headRowBytes(64));
    assertEquals(128, KvDtype.BFLOAT16.headRowBytes(64));
    assertEquals(128, KvDtype.FLOAT16.headRowBytes(64));
    assertEquals(68, KvDtype.INT8.headRowBytes(64)); // the scale, then 64 codes
    assertEquals(132, KvDtype.FP8.headRowBytes(128));
    assertEquals(64, KvDtype.FLOAT16.cacheLastDim(64));
    assertEquals(68, KvDtype.INT8.cacheLastDim(64));
  }

  @Test
  void settingsAndTheirRefusal() {
    for (KvDtype t : KvDtype.values()) {
      assertEquals(t, KvDtype.ofSetting(t.settingName()));
    }
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> KvDtype.ofSetting("int4"));
    assertEquals("unknown KV cache dtype int4 (auto, float32, bfloat16, float16, int8 or fp8)",
        e.getMessage());
  }

  /** Every e4m3fn code but NaN decodes and encodes back to itself; known values per OCP. */
  @Test
  void fp8CodesRoundTrip() {
    for (int c = 0; c < 256; c++) {
      float v = KvDtype.fp8Value(c);
      if ((c & 0x7F) == 0x7F) {
        assertTrue(Float.isNaN(v), "code " + c);
        continue;
      }
      assertEquals(c, KvDtype.fp8Code(v) & 0xFF, "code " + c + " value " + v);
    }
    assertEquals(448f, KvDtype.fp8Value(0x7E));
    assertEquals(0x1p-6f, KvDtype.fp8Value(0x08));
    assertEquals(0x1p-9f, KvDtype.fp8Value(0x01));
    assertEquals(-1.125f, KvDtype.fp8Value(0xB9));
    assertEquals(0x7E, KvDtype.fp8Code(1e9f)); // saturates to 448: e4m3fn has no infinity
    assertEquals(0xFE, KvDtype.fp8Code(-500f) & 0xFF);
    // ties to even: 1.0625 lies between 1 (mantissa 0) and 1.125 (mantissa 1)
    assertEquals(0x38, KvDtype.fp8Code(1.0625f));
    assertEquals(0x3A, KvDtype.fp8Code(1.1875f)); // between 1.125 and 1.25: to 1.25
  }

  /**
   * Each value comes back within half a step of its format: bf16 2^-8 and fp16 2^-11 relative
   * (fp16 below 2^-14 within 2^-25), int8 half the row's step (max|x| / 254), fp8 2^-4 relative
   * or, below the smallest normal, half a subnormal step (2^-10 of the row's scale); each plus the
   * one float rounding of code × scale.
   */
  @ParameterizedTest
  @EnumSource(KvDtype.class)
  void roundTripsWithinHalfAStep(KvDtype kv) {
    Random random = new Random(7 + kv.ordinal());
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment in = arena.allocate((long) D * Float.BYTES);
      MemorySegment row = arena.allocate(kv.headRowBytes(D));
      for (int trial = 0; trial < 200; trial++) {
        double magnitude = Math.pow(10, random.nextInt(9) - 6);
        float amax = 0;
        for (int d = 0; d < D; d++) {
          // a few outliers, as keys have
          float x = (float) (random.nextGaussian() * magnitude * (d % 17 == 0 ? 20 : 1));
          in.setAtIndex(ValueLayout.JAVA_FLOAT, d, x);
          amax = Math.max(amax, Math.abs(x));
        }
        kv.encodeRow(in, 0, row, 0, D);
        float scale = kv.scaled() ? row.get(ValueLayout.JAVA_FLOAT_UNALIGNED, 0) : 1f;
        for (int d = 0; d < D; d++) {
          float x = in.getAtIndex(ValueLayout.JAVA_FLOAT, d);
          float y = kv.decode(row, 0, d);
          double bound = switch (kv) {
            case FLOAT32 -> 0;
            case BFLOAT16 -> 0x1p-8 * Math.abs(x);
            case FLOAT16 -> Math.max(0x1p-11 * Math.abs(x), 0x1p-25);
            case INT8 -> amax / 254.0 + Math.ulp(amax);
            case FP8 -> Math.max(0x1p-4 * Math.abs(x), 0x1p-10 * scale) + Math.ulp(amax);
          };
          assertTrue(Math.abs(x - y) <= bound, kv + ": " + x + " came back as " + y
              + " (bound " + bound + ")");
        }
      }
    }
  }

  @ParameterizedTest
  @EnumSource(value = KvDtype.class, names = {"INT8", "FP8"})
  void aZeroRowIsZeroAndANonFiniteOneReadsNaN(KvDtype kv) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment in = arena.allocate((long) D * Float.BYTES);
      MemorySegment row = arena.allocate(kv.headRowBytes(D));
      kv.encodeRow(in, 0, row, 0, D);
      for (int d = 0; d < D; d++) {
        assertEquals(0f, kv.decode(row, 0, d));
      }
      in.setAtIndex(ValueLayout.JAVA_FLOAT, 3, Float.POSITIVE_INFINITY);
      kv.encodeRow(in, 0, row, 0, D);
      assertTrue(Float.isNaN(kv.decode(row, 0, 0)));
    }
  }
}
