package dev.radixserve.server.kvevents;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * A second, deliberately plain implementation of the published block hash, for tests: build the
 * canonical CBOR bytes of {@code [parent, tokens, extra]} in a buffer, then FNV-1a-64 them. It
 * shares no code with {@link dev.radixserve.cache.BlockHasher} (which hashes while it encodes).
 */
public final class ReferenceBlockHash {

  private ReferenceBlockHash() {}

  /** {@code FNV-1a-64(CBOR([FNV-1a-64(""), null, model]))}. */
  public static long root(String model) {
    return fnv(cbor(new Object[] {fnv(new byte[0]), null, model}));
  }

  /** One block's hash; {@code extra} is null or the salt. */
  public static long block(long parent, int[] tokens, String extra) {
    return fnv(cbor(new Object[] {parent, tokens, extra}));
  }

  /** The chain over the whole blocks of {@code path} (salted at block 0 when {@code salt} is non-empty). */
  public static long[] chain(String model, String salt, int[] path, int blockSize) {
    long[] out = new long[path.length / blockSize];
    long parent = root(model);
    for (int i = 0; i < out.length; i++) {
      int[] tokens = java.util.Arrays.copyOfRange(path, i * blockSize, (i + 1) * blockSize);
      parent = block(parent, tokens, i == 0 && !salt.isEmpty() ? salt : null);
      out[i] = parent;
    }
    return out;
  }

  static long fnv(byte[] bytes) {
    long h = 0xcbf29ce484222325L;
    for (byte b : bytes) {
      h ^= b & 0xff;
      h *= 0x100000001b3L;
    }
    return h;
  }

  static byte[] cbor(Object value) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    write(out, value);
    return out.toByteArray();
  }

  private static void write(ByteArrayOutputStream out, Object value) {
    switch (value) {
      case null -> out.write(0xf6);
      case Long v -> head(out, 0, v);
      case Integer v -> head(out, 0, v);
      case String s -> {
        byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
        head(out, 3, utf8.length);
        out.writeBytes(utf8);
      }
      case int[] a -> {
        head(out, 4, a.length);
        for (int v : a) {
          head(out, 0, v);
        }
      }
      case Object[] a -> {
        head(out, 4, a.length);
        for (Object v : a) {
          write(out, v);
        }
      }
      default -> throw new IllegalArgumentException("no CBOR for " + value.getClass());
    }
  }

  /** Major type and unsigned argument in the fewest bytes (RFC 8949 §4.2.1). */
  private static void head(ByteArrayOutputStream out, int major, long v) {
    int bytes;
    int info;
    if (Long.compareUnsigned(v, 23) <= 0) {
      out.write(major << 5 | (int) v);
      return;
    } else if (Long.compareUnsigned(v, 0xffL) <= 0) {
      info = 24;
      bytes = 1;
    } else if (Long.compareUnsigned(v, 0xffffL) <= 0) {
      info = 25;
      bytes = 2;
    } else if (Long.compareUnsigned(v, 0xffffffffL) <= 0) {
      info = 26;
      bytes = 4;
    } else {
      info = 27;
      bytes = 8;
    }
    out.write(major << 5 | info);
    for (int i = bytes - 1; i >= 0; i--) {
      out.write((int) (v >>> (8 * i)) & 0xff);
    }
  }
}
