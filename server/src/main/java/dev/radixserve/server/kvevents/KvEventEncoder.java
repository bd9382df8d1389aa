package dev.radixserve.server.kvevents;

import dev.radixserve.server.config.KvEventEncoding;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

/**
 * Encodes a {@code KVEventBatch} as vLLM's msgspec encoder does: the batch is the positional
 * array {@code [ts, events, data_parallel_rank]}; each event is a tagged union, either a
 * positional array whose first element is the tag (msgspec {@code array_like=True, tag=True})
 *
 * <pre>
 *   ["BlockStored", block_hashes, parent_block_hash, token_ids, block_size, lora_id, medium,
 *    lora_name(, extra_keys)]
 *   ["BlockRemoved", block_hashes, medium]
 *   ["AllBlocksCleared"]
 * </pre>
 *
 * or a map with the tag under {@code "type"} and the same fields by name. Fields that vLLM
 * declares with a default and that hold it are left out ({@code omit_defaults=True}): {@code
 * extra_keys} is sent only for a salted block 0, {@code group_idx} and the cache-spec fields
 * never. Block hashes are unsigned 64-bit integers; {@code ts} is a float64 of epoch seconds.
 */
final class KvEventEncoder {

  private final KvEventEncoding encoding;

  KvEventEncoder(KvEventEncoding encoding) {
    this.encoding = encoding;
  }

  byte[] encode(double ts, List<KvEvent> events) {
    try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
      p.packArrayHeader(3);
      p.packDouble(ts);
      p.packArrayHeader(events.size());
      for (KvEvent e : events) {
        switch (e) {
          case KvEvent.BlockStored s -> stored(p, s);
          case KvEvent.BlockRemoved r -> {
            header(p, "BlockRemoved", 3);
            field(p, "block_hashes");
            hashes(p, r.hashes());
            field(p, "medium");
            p.packString(r.medium());
          }
          case KvEvent.AllBlocksCleared c -> header(p, "AllBlocksCleared", 1);
        }
      }
      p.packInt(0); // data_parallel_rank: one engine, rank 0 (vLLM fills in its rank)
      return p.toByteArray();
    } catch (IOException e) {
      throw new UncheckedIOException("msgpack into a memory buffer failed", e);
    }
  }

  private void stored(MessageBufferPacker p, KvEvent.BlockStored s) throws IOException {
    header(p, "BlockStored", s.salt() == null ? 8 : 9);
    field(p, "block_hashes");
    hashes(p, s.hashes());
    field(p, "parent_block_hash");
    if (s.parentHash() == null) {
      p.packNil();
    } else {
      unsigned(p, s.parentHash());
    }
    field(p, "token_ids");
    p.packArrayHeader(s.tokenIds().length);
    for (int t : s.tokenIds()) {
      p.packInt(t);
    }
    field(p, "block_size");
    p.packInt(s.blockSize());
    field(p, "lora_id");
    p.packNil();
    field(p, "medium");
    p.packString(s.medium());
    field(p, "lora_name");
    p.packNil();
    if (s.salt() != null) {
      // one entry per block: vLLM's block-0 extra keys end with the cache salt
      field(p, "extra_keys");
      p.packArrayHeader(s.hashes().length);
      p.packArrayHeader(1);
      p.packString(s.salt());
      for (int i = 1; i < s.hashes().length; i++) {
        p.packNil();
      }
    }
  }

  /** The tag and room for the fields: the array's first element, or the map's "type" entry. */
  private void header(MessageBufferPacker p, String tag, int items) throws IOException {
    if (encoding == KvEventEncoding.ARRAY) {
      p.packArrayHeader(items);
    } else {
      p.packMapHeader(items);
      p.packString("type");
    }
    p.packString(tag);
  }

  private void field(MessageBufferPacker p, String name) throws IOException {
    if (encoding == KvEventEncoding.MAP) {
      p.packString(name);
    }
  }

  private static void hashes(MessageBufferPacker p, long[] hashes) throws IOException {
    p.packArrayHeader(hashes.length);
    for (long h : hashes) {
      unsigned(p, h);
    }
  }

  /** A 64-bit hash as msgpack's unsigned integer (uint64 above 2^63, where Java's long is negative). */
  private static void unsigned(MessageBufferPacker p, long v) throws IOException {
    if (v >= 0) {
      p.packLong(v);
    } else {
      byte[] b = new byte[9];
      b[0] = (byte) 0xcf;
      for (int i = 0; i < 8; i++) {
        b[1 + i] = (byte) (v >>> (56 - 8 * i));
      }
      p.writePayload(b);
    }
  }
}
