package dev.radixserve.cache;

/**
 * The radix-cache namespace of a request: {@value #DEFAULT} (empty) without {@code cache_salt},
 * {@code "salt:" + salt} with one. Every salt, the empty string included, is a namespace of its
 * own, and none can be mistaken for the default; the prefix leaves room for other partitions
 * (adapters) later. KV events publish the salt itself ({@link #saltOf}), as vLLM hashes it.
 */
public final class CacheNamespace {

  public static final String DEFAULT = "";
  private static final String SALT = "salt:";

  private CacheNamespace() {}

  /** @param salt the request's {@code cache_salt}; null when it has none */
  public static String ofSalt(String salt) {
    return salt == null ? DEFAULT : SALT + salt;
  }

  /** The salt of a namespace; null for the default one. */
  public static String saltOf(String namespace) {
    if (namespace.startsWith(SALT)) {
      return namespace.substring(SALT.length());
    }
    if (!namespace.equals(DEFAULT)) {
      throw new IllegalArgumentException("not a cache namespace: " + namespace);
    }
    return null;
  }
}
