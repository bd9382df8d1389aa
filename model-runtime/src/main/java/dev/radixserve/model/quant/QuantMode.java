package dev.radixserve.model.quant;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/** How the linear layers' weights are stored: as they are (fp32), or block-quantized to 8 or 4 bits. */
public enum QuantMode {
  NONE(32),
  INT8(8),
  INT4(4);

  private final int bits;

  QuantMode(int bits) {
    this.bits = bits;
  }

  /** Bits per weight of a quantized mode (32 for {@link #NONE}). */
  public int bits() {
    return bits;
  }

  /** The flag's spelling: {@code none}, {@code int8}, {@code int4}. */
  public String label() {
    return name().toLowerCase(Locale.ROOT);
  }

  /**
   * The mode spelled {@code text} (case-insensitive).
   *
   * @throws IllegalArgumentException naming the allowed values
   */
  public static QuantMode parse(String text) {
    for (QuantMode m : values()) {
      if (m.label().equalsIgnoreCase(text.strip())) {
        return m;
      }
    }
    throw new IllegalArgumentException("unknown quantization '" + text + "' (allowed: "
        + Arrays.stream(values()).map(QuantMode::label).collect(Collectors.joining(", ")) + ")");
  }
}
