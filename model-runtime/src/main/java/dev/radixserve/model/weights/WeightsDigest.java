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
 */
public final class WeightsDigest {

  static final int SAMPLES = 64;
  static final int PAGE = 4096;

  private WeightsDigest() {}

  /** 16 hex digits (64 bits) of the digest of {@code files}, in the order given. */
  public static String of(List<Path> files) {
    MessageDigest sha = sha256();
    for (Path file : files) {
      try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
        long size = ch.size();
        sha.update((file.getFileName() + "|" + size + "|").getBytes(StandardCharsets.UTF_8));
        ByteBuffer len = read(ch, 0, 8);
        long headerLength = len.remaining() == 8
            ? len.order(ByteOrder.LITTLE_ENDIAN).getLong(0) : 0;
        long dataStart = Math.min(size, 8 + Math.max(0, headerLength));
        sha.update(read(ch, 0, dataStart));
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

  private static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every JDK", e);
    }
  }
}
