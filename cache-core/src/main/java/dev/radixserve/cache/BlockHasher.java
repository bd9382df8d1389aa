package dev.radixserve.cache;

import java.nio.charset.StandardCharsets;

/**
 * The block hashes radixserve publishes: a chain over whole blocks of B tokens,
 *
 * <pre>
 *   h(-1) = FNV-1a-64(CBOR([FNV-1a-64(""), null, model]))          the root, one per model
 *   h(i)  = FNV-1a-64(CBOR([h(i-1), [t(iB) ... t(iB+B-1)], extra(i)]))
 *   extra(0) = the cache salt (the radix namespace) as a text string, or null when unsalted
 *   extra(i) = null for i &gt; 0
 * </pre>
 *
 * with canonical CBOR (RFC 8949 §4.2.1: shortest heads, definite lengths; hashes and token ids as
 * unsigned integers). This is llm-d-kv-cache's own block key function ({@code
 * chunkedTokenDatabase.hash}, hash seed "" and the model's name as its init key), so for an
 * unsalted prefix the hash radixserve publishes equals the key llm-d computes from the token ids.
 * llm-d does not rely on that: it keeps engine hashes as opaque keys and recomputes its own.
 *
 * <p>{@code model} is the served name for fp32 weights and {@code name@quantization} (e.g.
 * {@code gpt2@int4/b32/sym/acc4}) for quantized ones: the same tokens under another quantization
 * are other KV blocks, so their hashes differ from the root on.
 *
 * <p>A salt enters at block 0 and so changes every later hash: two tenants' equal prefixes never
 * share a hash (up to a 64-bit collision), as they never share blocks in the radix cache. Only
 * full blocks have hashes; a partial last block is never published.
 */
public final class BlockHasher {

  private static final long FNV_OFFSET = 0xcbf29ce484222325L;
  private static final long FNV_PRIME = 0x100000001b3L;

  private final int blockSize;
  private final long root;

  /**
   * @param model the served model name (llm-d reads it from the topic's last segment)
   * @param blockSize tokens per block
   */
  public BlockHasher(String model, int blockSize) {
    if (blockSize < 1) {
      throw new IllegalArgumentException("block size must be at least 1, got " + blockSize);
    }
    this.blockSize = blockSize;
    Fnv seed = new Fnv();
    Fnv init = new Fnv();
    init.head(4, 3);
    init.head(0, seed.value);
    init.nil();
    init.text(model);
    this.root = init.value;
  }

  public int blockSize() {
    return blockSize;
  }

  /** h(-1): the parent of every namespace's block 0. */
  public long root() {
    return root;
  }

  /**
   * The hashes of blocks {@code [0, end)} of {@code path} in {@code namespace}.
   *
   * @throws IllegalArgumentException if the path is shorter than {@code end} blocks
   */
  public long[] chain(String namespace, int[] path, int end) {
    if ((long) end * blockSize > path.length) {
      throw new IllegalArgumentException(end + " blocks of " + blockSize + " tokens need "
          + (long) end * blockSize + " tokens, the path has " + path.length);
    }
    long[] hashes = new long[end];
    long parent = root;
    for (int i = 0; i < end; i++) {
      parent = block(parent, path, i * blockSize, i == 0 ? CacheNamespace.saltOf(namespace) : null);
      hashes[i] = parent;
    }
    return hashes;
  }

  /** h(i) from h(i-1), the block's tokens {@code tokens[from, from + B)} and its extra key. */
  public long block(long parent, int[] tokens, int from, String salt) {
    Fnv f = new Fnv();
    f.head(4, 3);
    f.head(0, parent);
    f.head(4, blockSize);
    for (int i = from, end = from + blockSize; i < end; i++) {
      f.head(0, tokens[i]);
    }
    if (salt == null) {
      f.nil();
    } else {
      f.text(salt);
    }
    return f.value;
  }

  /** FNV-1a 64 fed with canonical CBOR items as they are written (no buffer). */
  private static final class Fnv {
    long value = FNV_OFFSET;

    void put(int b) {
      value = (value ^ (b & 0xff)) * FNV_PRIME;
    }

    /** A head of major type {@code major} with argument {@code v} (unsigned), shortest form. */
    void head(int major, long v) {
      int type = major << 5;
      if (Long.compareUnsigned(v, 24) < 0) {
        put(type | (int) v);
      } else if (Long.compareUnsigned(v, 1L << 8) < 0) {
        put(type | 24);
        put((int) v);
      } else if (Long.compareUnsigned(v, 1L << 16) < 0) {
        put(type | 25);
        putBigEndian(v, 2);
      } else if (Long.compareUnsigned(v, 1L << 32) < 0) {
        put(type | 26);
        putBigEndian(v, 4);
      } else {
        put(type | 27);
        putBigEndian(v, 8);
      }
    }

    private void putBigEndian(long v, int bytes) {
      for (int shift = (bytes - 1) * 8; shift >= 0; shift -= 8) {
        put((int) (v >>> shift));
      }
    }

    void nil() {
      put(0xf6);
    }

    void text(String s) {
      byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
      head(3, utf8.length);
      for (byte b : utf8) {
        put(b);
      }
    }
  }
}
