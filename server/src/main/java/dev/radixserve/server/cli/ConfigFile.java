package dev.radixserve.server.cli;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.radixserve.server.config.ServerConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The YAML configuration file: a flat mapping from {@link ConfigKey} names to scalar values.
 * Reading rejects unknown and duplicate keys; writing produces the same shape, so the output of
 * {@code --print-config} is a valid {@code --config} file.
 */
final class ConfigFile {

  private static final YAMLMapper MAPPER = YAMLMapper.builder(YAMLFactory.builder()
          .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
          .build())
      .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
      .enable(YAMLGenerator.Feature.MINIMIZE_QUOTES)
      .build();

  private ConfigFile() {}

  /** The raw text of each key set in the file; keys set to {@code null} are left out. */
  static Map<ConfigKey, String> read(Path file) {
    JsonNode root;
    try {
      root = MAPPER.readTree(Files.readString(file));
    } catch (NoSuchFileException e) {
      throw new ConfigException("config file not found: " + file);
    } catch (JacksonException e) {
      throw new ConfigException("config file " + file + " is not valid YAML: "
          + e.getOriginalMessage());
    } catch (IOException e) {
      throw new ConfigException("cannot read config file " + file + ": " + e.getMessage(), e);
    }
    Map<ConfigKey, String> values = new EnumMap<>(ConfigKey.class);
    if (root == null || root.isMissingNode() || root.isNull()) {
      return values;  // an empty file sets nothing
    }
    if (!root.isObject()) {
      throw new ConfigException("config file " + file
          + " must be a mapping of keys to values, not " + root.getNodeType());
    }
    for (Map.Entry<String, JsonNode> field : root.properties()) {
      ConfigKey key = ConfigKey.byKey(field.getKey()).orElseThrow(() -> new ConfigException(
          "unknown key '" + field.getKey() + "' in config file " + file
              + " (allowed keys: " + ConfigKey.allKeys() + ")"));
      JsonNode value = field.getValue();
      if (value.isNull()) {
        continue;
      }
      if (!value.isValueNode()) {
        throw new ConfigException("invalid value for " + key.key() + " in config file " + file
            + ": a " + value.getNodeType() + " (allowed: a single value)");
      }
      values.put(key, value.asText());
    }
    return values;
  }

  /** Every key with its effective value, in {@link ConfigKey} order; unset ones as {@code null}. */
  static String write(ServerConfig config) {
    Map<String, Object> values = new LinkedHashMap<>();
    for (ConfigKey key : ConfigKey.values()) {
      values.put(key.key(), key.format(config));
    }
    try {
      return MAPPER.writeValueAsString(values);
    } catch (JacksonException e) {
      throw new IllegalStateException("cannot write configuration as YAML", e);
    }
  }
}
