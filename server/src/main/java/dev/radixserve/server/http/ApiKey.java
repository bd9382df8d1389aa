package dev.radixserve.server.http;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Locale;

/**
 * Checks {@code Authorization: Bearer KEY}. The scheme is case-insensitive (RFC 9110 §11.1) and
 * the keys are compared in constant time over their SHA-256 digests, so neither the position
 * of the first wrong byte nor the key's length shows in the response time.
 */
final class ApiKey {

  private static final String SCHEME = "bearer";

  private final byte[] digest;

  ApiKey(String key) {
    this.digest = sha256(key);
  }

  boolean accepts(String authorization) {
    if (authorization == null) {
      return false;
    }
    String value = authorization.strip();
    if (value.length() <= SCHEME.length()
        || !value.substring(0, SCHEME.length()).toLowerCase(Locale.ROOT).equals(SCHEME)
        || !Character.isWhitespace(value.charAt(SCHEME.length()))) {
      return false;
    }
    return MessageDigest.isEqual(digest, sha256(value.substring(SCHEME.length()).strip()));
  }

  private static byte[] sha256(String s) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-256", e);
    }
  }
}
