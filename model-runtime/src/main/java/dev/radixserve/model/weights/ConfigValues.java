package dev.radixserve.model.weights;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;

/**
 * Typed reads of a config.json value, each refusing a value of the wrong type by key and value
 * ({@link ModelLoadException}): what every family's config reader shares.
 */
final class ConfigValues {

  private ConfigValues() {}

  /** A boolean, or {@code absent} when the key is missing or null. */
  static boolean bool(JsonNode c, Path file, String key, boolean absent) {
    JsonNode v = c.get(key);
    if (v == null || v.isNull()) {
      return absent;
    }
    if (!v.isBoolean()) {
      throw new ModelLoadException(file, key + " " + v + " is not a boolean");
    }
    return v.asBoolean();
  }

  /** A required int. */
  static int intField(JsonNode c, Path file, String name) {
    JsonNode v = c.get(name);
    if (v == null || !v.isIntegralNumber() || !v.canConvertToInt()) {
      throw new ModelLoadException(file, "field " + name + " is missing or not an integer");
    }
    return v.asInt();
  }
}
