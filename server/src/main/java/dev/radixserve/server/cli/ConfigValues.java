package dev.radixserve.server.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Parses and formats the textual value syntaxes shared by flags, environment variables and the
 * config file: sizes ({@code 512m}), durations ({@code 30s}), booleans and enum choices. A value
 * that does not parse throws {@link BadValue} naming what would have been allowed; the caller adds
 * the key and where the value came from.
 */
final class ConfigValues {

  /** A value outside its syntax; the message is the allowed form, e.g. "an integer". */
  static final class BadValue extends RuntimeException {
    BadValue(String allowed) {
      super(allowed);
    }

    String allowed() {
      return getMessage();
    }
  }

  private static final Pattern SIZE = Pattern.compile("(\\d+)\\s*([kmgt]?)(i?b)?", Pattern.CASE_INSENSITIVE);
  private static final Pattern DURATION = Pattern.compile("(\\d+)\\s*(ms|s|m|h)", Pattern.CASE_INSENSITIVE);
  private static final String SIZE_FORM = "bytes as an integer with an optional suffix k, m, g or t (e.g. 512m)";
  private static final String DURATION_FORM = "an integer with a unit ms, s, m or h (e.g. 30s)";

  private ConfigValues() {}

  static String text(String raw) {
    if (raw.isBlank()) {
      throw new BadValue("a non-empty string");
    }
    return raw.strip();
  }

  static int integer(String raw) {
    try {
      return Integer.parseInt(raw.strip());
    } catch (NumberFormatException e) {
      throw new BadValue("an integer");
    }
  }

  static boolean bool(String raw) {
    return switch (raw.strip().toLowerCase(Locale.ROOT)) {
      case "true" -> true;
      case "false" -> false;
      default -> throw new BadValue("true, false");
    };
  }

  static <E extends Enum<E>> E choice(String raw, Class<E> type) {
    for (E constant : type.getEnumConstants()) {
      if (constant.name().equalsIgnoreCase(raw.strip())) {
        return constant;
      }
    }
    throw new BadValue(Arrays.stream(type.getEnumConstants())
        .map(ConfigValues::formatChoice)
        .collect(Collectors.joining(", ")));
  }

  /** {@link #choice}, or null for {@code auto} (the model's own choice). */
  static <E extends Enum<E>> E choiceOrAuto(String raw, Class<E> type) {
    if (raw.strip().equalsIgnoreCase("auto")) {
      return null;
    }
    try {
      return choice(raw, type);
    } catch (BadValue e) {
      throw new BadValue("auto, " + e.allowed());
    }
  }

  static String formatChoice(Enum<?> value) {
    return value.name().toLowerCase(Locale.ROOT);
  }

  static Path directory(String raw) {
    Path path = Path.of(text(raw));
    if (!Files.isDirectory(path)
        && !(dev.radixserve.model.gguf.GgufModelLoader.isGguf(path) && Files.isRegularFile(path))) {
      throw new BadValue("an existing directory holding config.json and model.safetensors, or a"
          + " .gguf file");
    }
    return path;
  }

  /** Binary multiples: {@code 1k} is 1024 bytes. */
  static long bytes(String raw) {
    Matcher m = SIZE.matcher(raw.strip());
    if (!m.matches()) {
      throw new BadValue(SIZE_FORM);
    }
    int shift = switch (m.group(2).toLowerCase(Locale.ROOT)) {
      case "" -> 0;
      case "k" -> 10;
      case "m" -> 20;
      case "g" -> 30;
      default -> 40;
    };
    try {
      long value = Long.parseLong(m.group(1));
      if (value > (Long.MAX_VALUE >> shift)) {
        throw new BadValue(SIZE_FORM + " below 8 exbibytes");
      }
      return value << shift;
    } catch (NumberFormatException e) {
      throw new BadValue(SIZE_FORM + " below 8 exbibytes");
    }
  }

  /** The largest exact suffix, so that {@link #bytes} reads it back to the same number. */
  static String formatBytes(long bytes) {
    String[] suffixes = {"t", "g", "m", "k"};
    int[] shifts = {40, 30, 20, 10};
    for (int i = 0; i < suffixes.length; i++) {
      long unit = 1L << shifts[i];
      if (bytes != 0 && bytes % unit == 0) {
        return (bytes / unit) + suffixes[i];
      }
    }
    return Long.toString(bytes);
  }

  static Duration duration(String raw) {
    Matcher m = DURATION.matcher(raw.strip());
    if (!m.matches()) {
      throw new BadValue(DURATION_FORM);
    }
    long amount;
    try {
      amount = Long.parseLong(m.group(1));
    } catch (NumberFormatException e) {
      throw new BadValue(DURATION_FORM);
    }
    return switch (m.group(2).toLowerCase(Locale.ROOT)) {
      case "ms" -> Duration.ofMillis(amount);
      case "s" -> Duration.ofSeconds(amount);
      case "m" -> Duration.ofMinutes(amount);
      default -> Duration.ofHours(amount);
    };
  }

  /** The largest exact unit, so that {@link #duration} reads it back to the same duration. */
  static String formatDuration(Duration d) {
    long ms = d.toMillis();
    if (ms != 0 && ms % 3_600_000 == 0) {
      return (ms / 3_600_000) + "h";
    }
    if (ms != 0 && ms % 60_000 == 0) {
      return (ms / 60_000) + "m";
    }
    if (ms % 1000 == 0) {
      return (ms / 1000) + "s";
    }
    return ms + "ms";
  }
}
