package dev.radixserve.server.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class ConfigValuesTest {

  @Test
  void sizesAreBinaryMultiples() {
    assertEquals(100, ConfigValues.bytes("100"));
    assertEquals(2048, ConfigValues.bytes("2k"));
    assertEquals(512L << 20, ConfigValues.bytes("512m"));
    assertEquals(512L << 20, ConfigValues.bytes("512MiB"));
    assertEquals(4L << 30, ConfigValues.bytes("4G"));
    assertEquals(3L << 40, ConfigValues.bytes("3t"));
  }

  @Test
  void sizesFormatWithTheLargestExactSuffixAndReadBack() {
    assertEquals("512m", ConfigValues.formatBytes(512L << 20));
    assertEquals("8m", ConfigValues.formatBytes(8L << 20));
    assertEquals("1536m", ConfigValues.formatBytes(1536L << 20));
    assertEquals("1000", ConfigValues.formatBytes(1000));
    assertEquals("0", ConfigValues.formatBytes(0));
    for (long n : new long[] {1, 1023, 1024, 1025, 3L << 30, (5L << 30) + 4096}) {
      assertEquals(n, ConfigValues.bytes(ConfigValues.formatBytes(n)));
    }
  }

  @Test
  void badSizesNameTheAllowedForm() {
    for (String bad : new String[] {"", "m", "-5m", "12x", "1.5g", "99999999999999999999"}) {
      ConfigValues.BadValue e = assertThrows(ConfigValues.BadValue.class, () -> ConfigValues.bytes(bad));
      assertEquals(true, e.allowed().startsWith("bytes as an integer with an optional suffix"), bad);
    }
    assertThrows(ConfigValues.BadValue.class, () -> ConfigValues.bytes("9000000t"));
  }

  @Test
  void durationsNeedAUnit() {
    assertEquals(Duration.ofMillis(250), ConfigValues.duration("250ms"));
    assertEquals(Duration.ofSeconds(30), ConfigValues.duration("30s"));
    assertEquals(Duration.ofMinutes(2), ConfigValues.duration("2m"));
    assertEquals(Duration.ofHours(1), ConfigValues.duration("1H"));
    ConfigValues.BadValue e = assertThrows(ConfigValues.BadValue.class, () -> ConfigValues.duration("30"));
    assertEquals("an integer with a unit ms, s, m or h (e.g. 30s)", e.allowed());
  }

  @Test
  void durationsFormatWithTheLargestExactUnitAndReadBack() {
    assertEquals("30s", ConfigValues.formatDuration(Duration.ofSeconds(30)));
    assertEquals("2m", ConfigValues.formatDuration(Duration.ofSeconds(120)));
    assertEquals("1h", ConfigValues.formatDuration(Duration.ofMinutes(60)));
    assertEquals("1500ms", ConfigValues.formatDuration(Duration.ofMillis(1500)));
    assertEquals("0s", ConfigValues.formatDuration(Duration.ZERO));
    for (Duration d : new Duration[] {Duration.ofMillis(1), Duration.ofSeconds(61), Duration.ofHours(25)}) {
      assertEquals(d, ConfigValues.duration(ConfigValues.formatDuration(d)));
    }
  }

  @Test
  void booleansAreStrict() {
    assertEquals(true, ConfigValues.bool("TRUE"));
    assertEquals(false, ConfigValues.bool("false"));
    assertEquals("true, false",
        assertThrows(ConfigValues.BadValue.class, () -> ConfigValues.bool("yes")).allowed());
  }
}
