package dev.radixserve.server.kvtier;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.zip.CRC32C;

/**
 * One offloaded block on disk, little-endian:
 *
 * <pre>
 *   0   magic "RXKVBLK1"          8 bytes
 *   8   fingerprint               8   model, shape, block size, dtype and layout (KvTiers)
 *   16  hash, parent hash         8 + 8
 *   32  block size B              4
 *   36  payload bytes P           8
 *   44  token ids                 4·B
 *   44 + 4B  payload (KV)         P   KvBlockIo's layout
 *   ...      CRC32C of all above  4
 * </pre>
 *
 * A file whose header, length or checksum does not check out is never loaded: a crash mid-write
 * leaves a temp file or (without fsync, after a power loss) a renamed file whose checksum fails.
 */
final class EntryFile {

  static final String SUFFIX = ".kvb";
  static final String TEMP_SUFFIX = ".tmp";
  private static final byte[] MAGIC = "RXKVBLK1".getBytes(StandardCharsets.US_ASCII);
  private static final int FIXED_HEADER = 44;

  /** What an entry file must hold to belong to a tier. */
  record Format(long fingerprint, int blockSize, long payloadBytes) {

    int headerBytes() {
      return FIXED_HEADER + 4 * blockSize;
    }

    long fileBytes() {
      return headerBytes() + payloadBytes + 4;
    }
  }

  /** Why a file was not taken. */
  static class BadEntry extends Exception {
    BadEntry(String message) {
      super(message);
    }
  }

  /** A sound file of another model, block size or dtype: skipped, left alone. */
  static final class ForeignEntry extends BadEntry {
    ForeignEntry(String message) {
      super(message);
    }
  }

  private EntryFile() {}

  static String fileName(long hash) {
    return String.format("%016x%s", hash, SUFFIX);
  }

  /** Writes a complete entry to {@code path} (the caller renames it into place). */
  static void write(Path path, Format format, BlockKey key, ByteBuffer payload)
      throws IOException {
    ByteBuffer header = header(format, key);
    CRC32C crc = new CRC32C();
    crc.update(header.duplicate());
    crc.update(payload.duplicate());
    ByteBuffer tail = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN);
    tail.putInt((int) crc.getValue()).flip();
    try (FileChannel ch = FileChannel.open(path, StandardOpenOption.CREATE_NEW,
        StandardOpenOption.WRITE)) {
      ByteBuffer[] parts = {header, payload.duplicate(), tail};
      long left = format.fileBytes();
      while (left > 0) {
        left -= ch.write(parts);
      }
    }
  }

  /**
   * Reads and checks the header of {@code path} (magic, format, file length): a start-up scan
   * rebuilds the index from headers alone; the checksum is checked when the entry is loaded.
   */
  static BlockKey readKey(Path path, Format format) throws IOException, BadEntry {
    try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
      if (ch.size() < format.headerBytes()) {
        throw new BadEntry("truncated: " + ch.size() + " bytes");
      }
      ByteBuffer header = ByteBuffer.allocate(format.headerBytes()).order(ByteOrder.LITTLE_ENDIAN);
      readFully(ch, header, 0);
      BlockKey key = parseHeader(header.flip(), format);
      if (ch.size() != format.fileBytes()) {
        throw new BadEntry("length " + ch.size() + ", expected " + format.fileBytes());
      }
      return key;
    }
  }

  /**
   * Reads the entry at {@code path} into {@code buffer} (capacity at least the file's bytes),
   * checks it holds {@code key}'s block and its checksum, and leaves the payload between the
   * buffer's position and limit.
   */
  static void read(Path path, Format format, BlockKey key, ByteBuffer buffer)
      throws IOException, BadEntry {
    buffer.clear().order(ByteOrder.LITTLE_ENDIAN);
    buffer.limit((int) format.fileBytes());
    try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
      if (ch.size() != format.fileBytes()) {
        throw new BadEntry("length " + ch.size() + ", expected " + format.fileBytes());
      }
      readFully(ch, buffer, 0);
    }
    buffer.flip();
    int crcAt = (int) format.fileBytes() - 4;
    CRC32C crc = new CRC32C();
    crc.update(buffer.duplicate().limit(crcAt));
    if ((int) crc.getValue() != buffer.getInt(crcAt)) {
      throw new BadEntry("checksum mismatch");
    }
    BlockKey stored = parseHeader(buffer.duplicate().order(ByteOrder.LITTLE_ENDIAN), format);
    if (!stored.sameBlock(key)) {
      throw new BadEntry("holds " + stored + ", not " + key);
    }
    buffer.position(format.headerBytes()).limit(crcAt);
  }

  private static ByteBuffer header(Format format, BlockKey key) {
    ByteBuffer b = ByteBuffer.allocate(format.headerBytes()).order(ByteOrder.LITTLE_ENDIAN);
    b.put(MAGIC).putLong(format.fingerprint()).putLong(key.hash()).putLong(key.parent())
        .putInt(format.blockSize()).putLong(format.payloadBytes());
    for (int t : key.tokens()) {
      b.putInt(t);
    }
    return b.flip();
  }

  private static BlockKey parseHeader(ByteBuffer b, Format format) throws BadEntry {
    byte[] magic = new byte[MAGIC.length];
    b.get(magic);
    if (!Arrays.equals(magic, MAGIC)) {
      throw new BadEntry("not a KV block file");
    }
    long fingerprint = b.getLong();
    long hash = b.getLong();
    long parent = b.getLong();
    int blockSize = b.getInt();
    long payload = b.getLong();
    if (fingerprint != format.fingerprint() || blockSize != format.blockSize()
        || payload != format.payloadBytes()) {
      throw new ForeignEntry("another model, block size or dtype");
    }
    int[] tokens = new int[blockSize];
    for (int i = 0; i < blockSize; i++) {
      tokens[i] = b.getInt();
    }
    return new BlockKey(hash, parent, tokens);
  }

  private static void readFully(FileChannel ch, ByteBuffer dst, long position) throws IOException {
    long pos = position;
    while (dst.hasRemaining()) {
      int n = ch.read(dst, pos);
      if (n < 0) {
        throw new IOException("unexpected end of file");
      }
      pos += n;
    }
  }
}
