package dev.radixserve.cache;

/**
 * The radix-cache namespace of a request: {@value #DEFAULT} (empty) without {@code cache_salt},
 * {@code "salt:" + salt} with one. Every salt, the empty string included, is a namespace of its
 * own, and none can be mistaken for the default; the prefix leaves room for other partitions
 * (adapters) later. Each has a long-context twin ({@link #longContext}). KV events publish the salt itself ({@link #saltOf}), as vLLM hashes it.
 */
public final class CacheNamespace {

  public static final String DEFAULT = "";
  private static final String SALT = "salt:";
  private static final String LONG_CONTEXT = "long:";
  /**
   * What a long-context namespace adds to its salt in the block hashes: its blocks hold keys
   * rotated otherwise, so they must never hash like the same tokens' in the usual context.
   */
  static final String LONG_CONTEXT_SALT = "\u0000long-context\u0000";

  private CacheNamespace() {}

  /**
   * {@code namespace}'s twin for sequences in the model's long context (a prompt past Phi-3's
   * original_max_position_embeddings: longrope's long factors), whose keys are rotated otherwise
   * and so never shared with the usual context's.
   */
  public static String longContext(String namespace) {
    if (isLongContext(namespace)) {
      throw new IllegalArgumentException("already a long-context namespace: " + namespace);
    }
    saltOf(namespace); // a namespace of this class
    return LONG_CONTEXT + namespace;
  }

  public static boolean isLongContext(String namespace) {
    return namespace.startsWith(LONG_CONTEXT);
  }

  /** @param salt the request's {@code cache_salt}; null when it has none */
  public static String ofSalt(String salt) {
    return salt == null ? DEFAULT : SALT + salt;
  }

  /**
   * The salt of a namespace; null for the default one. A long-context namespace's is its base
   * salt (empty for none) after {@link #LONG_CONTEXT_SALT}.
   */
  public static String saltOf(String namespace) {
    if (isLongContext(namespace)) {
      String base = saltOf(namespace.substring(LONG_CONTEXT.length()));
      return LONG_CONTEXT_SALT + (base == null ? "" : base);
    }
    if (namespace.startsWith(SALT)) {
      return namespace.substring(SALT.length());
    }
    if (!namespace.equals(DEFAULT)) {
      throw new IllegalArgumentException("not a cache namespace: " + namespace);
    }
    return null;
  }
}
