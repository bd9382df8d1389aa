package dev.radixserve.model.weights;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;

/**
 * Which weights a checkpoint holds, cheaply: SHA-256 over every safetensors file's name, size and
 * header (names, dtypes, shapes, offsets), and {@value #SAMPLES} pages of {@value #PAGE} bytes
 * spread evenly over its data, first and last included. New weights of the same shape under the
 * same name differ in their sampled pages (a fine-tune changes every tensor; so does another
 * random seed), so the KV cache's tiers can tell them apart without reading the whole file
 * (docs/benchmarks/journal/2026-11-21-to-28.md "A model costs its bytes" measures it on the 1B shape). A change confined to
 * bytes between the samples goes unseen: this is a fingerprint, not an integrity check.
 *
 * <p>Another format (a GGUF file: its first 8 bytes are a magic and a version, not a length) has
 * its first {@value #OTHER_HEADER_BYTES} bytes hashed as its header (a GGUF file's metadata,
 * tokenizer and tensor table come first) and its pages sampled after them. Until 2026-11-28 the
 * magic was read as a header length, so a GGUF file was read whole into the heap (770 MB at the
 * 1B shape's Q4_0), and one over 2 GiB (every 8B file) could not be served at all.
 */
public final class WeightsDigest {

  static final int SAMPLES = 64;
  static final int PAGE = 4096;
  /** The prefix hashed as the header of a file that is not safetensors. */
  static final long OTHER_HEADER_BYTES = 16L << 20;
  /** Bytes read at a time while hashing a header. */
  private static final int CHUNK = 1 << 20;

  private WeightsDigest() {}

  /** 16 hex digits (64 bits) of the digest of {@code files}, in the order given. */
  public static String of(List<Path> files) {
    MessageDigest sha = sha256();
    for (Path file : files) {
      try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
        long size = ch.size();
        sha.update((file.getFileName() + "|" + size + "|").getBytes(StandardCharsets.UTF_8));
        long dataStart = dataStart(ch, size);
        for (long at = 0; at < dataStart; at += CHUNK) {
          sha.update(read(ch, at, Math.min(CHUNK, dataStart - at)));
        }
        long data = size - dataStart;
        for (int i = 0; i < SAMPLES && data > 0; i++) {
          long offset = dataStart + (data <= PAGE ? 0 : (data - PAGE) * i / (SAMPLES - 1));
          sha.update(read(ch, offset, Math.min(PAGE, data)));
        }
      } catch (IOException e) {
        throw new UncheckedIOException("reading " + file + " for its digest", e);
      }
    }
    return HexFormat.of().formatHex(sha.digest(), 0, 8);
  }

  /**
   * Where a file's data starts: after a safetensors header (an 8-byte little-endian length and
   * that many bytes of JSON, which must fit in the file), else after the first {@value
   * #OTHER_HEADER_BYTES} bytes.
   */
  static long dataStart(FileChannel ch, long size) throws IOException {
    ByteBuffer len = read(ch, 0, 8);
    if (len.remaining() == 8) {
      long header = len.order(ByteOrder.LITTLE_ENDIAN).getLong(0);
      if (header > 0 && header <= size - 8) {
        ByteBuffer first = read(ch, 8, 1);
        if (first.remaining() == 1 && first.get(0) == '{') {
          return 8 + header;
        }
      }
    }
    return Math.min(size, OTHER_HEADER_BYTES);
  }

  /**
   * What names a derived copy of these weights (the quantized file a {@code WeightStore} cache
   * keeps): the sampled {@code digest}, and each file's real path, size and modification time,
   * so that a file rewritten in place, even between the digest's samples, misses the cache.
   */
  public static String cacheKey(String digest, List<Path> files) {
    StringBuilder key = new StringBuilder(digest);
    for (Path file : files) {
      try {
        key.append('|').append(file.toRealPath()).append('|').append(java.nio.file.Files.size(file))
            .append('|').append(java.nio.file.Files.getLastModifiedTime(file).toMillis());
      } catch (IOException e) {
        throw new UncheckedIOException("reading " + file + " for its cache key", e);
      }
    }
    return key.toString();
  }

  private static ByteBuffer read(FileChannel ch, long position, long length) throws IOException {
    ByteBuffer b = ByteBuffer.allocate(Math.toIntExact(length));
    while (b.hasRemaining()) {
      if (ch.read(b, position + b.position()) < 0) {
        break;
      }
    }
    return b.flip();
  }

  /** A SHA-256 digest (every JDK has one). */
  public static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every JDK", e);
    }
  }
}
