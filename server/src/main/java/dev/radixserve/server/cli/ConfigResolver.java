package dev.radixserve.server.cli;

import dev.radixserve.model.ort.OrtLibrary;
import dev.radixserve.server.config.ServerConfig;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Builds the {@link ServerConfig} from its four layers, highest first: command-line flags,
 * environment variables ({@code RADIXSERVE_*}), the config file, built-in defaults. A value is
 * taken from the highest layer that sets it; every value taken is validated, and an error names
 * the key, the layer it came from and what is allowed.
 */
final class ConfigResolver {

  /** The environment variable naming the config file when {@code --config} is absent. */
  static final String CONFIG_ENV = ConfigKey.envVarOf("config");

  /**
   * RADIXSERVE_* variables that are not settings but are read: the config file's, and the ONNX
   * Runtime library's path (read where the library is loaded; docker/run-gpu.sh sets it).
   */
  private static final Set<String> NOT_SETTINGS = Set.of(CONFIG_ENV, OrtLibrary.PATH_ENV);

  private ConfigResolver() {}

  /**
   * @param flags raw text of the flags given on the command line
   * @param env the process environment (injected so tests need no real variables)
   * @param configFile the YAML file, or null for none
   */
  static ServerConfig resolve(Map<ConfigKey, String> flags, Map<String, String> env, Path configFile) {
    Map<ConfigKey, String> file = configFile == null ? Map.of() : ConfigFile.read(configFile);
    ServerConfig.Builder builder = ServerConfig.builder();
    for (ConfigKey key : ConfigKey.values()) {
      String envValue = env.get(key.envVar());
      if (flags.containsKey(key)) {
        apply(builder, key, flags.get(key), "flag " + key.flag());
      } else if (envValue != null && !envValue.isEmpty()) {
        apply(builder, key, envValue, "environment variable " + key.envVar());
      } else if (file.containsKey(key)) {
        apply(builder, key, file.get(key), "config file " + configFile);
      }
    }
    try {
      return builder.build();
    } catch (IllegalArgumentException e) {
      // ServerConfig's own range checks already name the key and the allowed values.
      throw new ConfigException(e.getMessage(), e);
    }
  }

  /** RADIXSERVE_* variables that match no setting: most likely typos, worth a warning. */
  static TreeSet<String> unknownEnvVars(Map<String, String> env) {
    TreeSet<String> unknown = new TreeSet<>();
    for (String name : env.keySet()) {
      if (name.startsWith(ConfigKey.ENV_PREFIX) && !NOT_SETTINGS.contains(name)
          && java.util.Arrays.stream(ConfigKey.values()).noneMatch(k -> k.envVar().equals(name))) {
        unknown.add(name);
      }
    }
    return unknown;
  }

  private static void apply(ServerConfig.Builder builder, ConfigKey key, String raw, String source) {
    try {
      key.apply(builder, raw);
    } catch (ConfigValues.BadValue e) {
      throw new ConfigException("invalid value for " + key.key() + " from " + source + ": '"
          + raw + "' (allowed: " + e.allowed() + ")");
    }
  }
}
