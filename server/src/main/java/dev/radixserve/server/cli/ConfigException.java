package dev.radixserve.server.cli;

/**
 * A configuration the server refuses to start with: unknown key, unparsable or out-of-range
 * value, unreadable file. The message names the key, where the value came from and what is
 * allowed; the CLI prints it on stderr and exits with status 2.
 */
final class ConfigException extends RuntimeException {
  ConfigException(String message) {
    super(message);
  }

  ConfigException(String message, Throwable cause) {
    super(message, cause);
  }
}
