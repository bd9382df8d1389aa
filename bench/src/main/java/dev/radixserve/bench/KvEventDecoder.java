package dev.radixserve.bench;

import java.io.IOException;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.value.ArrayValue;
import org.msgpack.value.MapValue;
import org.msgpack.value.Value;
import org.msgpack.value.ValueFactory;

/**
 * Decodes a vLLM {@code KVEventBatch} payload, as a consumer would, from the generic msgpack
 * value tree: the batch {@code [ts, events, data_parallel_rank]}, each event either a tagged
 * array ({@code ["BlockStored", block_hashes, parent_block_hash, token_ids, block_size, ...]})
 * or a tagged map ({@code {"type": "BlockStored", ...}}). Unknown trailing fields are ignored, as
 * vLLM's consumers do.
 */
public final class KvEventDecoder {

  /**
   * One event. For {@code BlockRemoved} and {@code AllBlocksCleared} only {@code type} and
   * {@code hashes} are set.
   *
   * @param parentHash null when the first block is a prompt's block 0
   * @param extraKeys per-block extra keys (null entries for none), or null when absent
   */
  public record Event(String type, long[] hashes, Long parentHash, int[] tokenIds, int blockSize,
      String medium, List<Value> extraKeys) {}

  /** @param events in order */
  public record Batch(double ts, List<Event> events, Integer dataParallelRank) {}

  private static final String[] STORED_FIELDS = {"block_hashes", "parent_block_hash",
      "token_ids", "block_size", "lora_id", "medium", "lora_name", "extra_keys"};
  private static final String[] REMOVED_FIELDS = {"block_hashes", "medium"};

  private KvEventDecoder() {}

  /** @throws IllegalArgumentException when the payload is not a KVEventBatch */
  public static Batch decode(byte[] payload) {
    Value root;
    try (MessageUnpacker u = MessagePack.newDefaultUnpacker(payload)) {
      root = u.unpackValue();
      if (u.hasNext()) {
        throw new IllegalArgumentException("trailing bytes after the KVEventBatch");
      }
    } catch (IOException e) {
      throw new IllegalArgumentException("not msgpack: " + e.getMessage(), e);
    }
    if (!root.isArrayValue() || root.asArrayValue().size() < 2) {
      throw new IllegalArgumentException("a KVEventBatch is an array [ts, events, rank], got "
          + root);
    }
    ArrayValue batch = root.asArrayValue();
    List<Event> events = new ArrayList<>();
    for (Value e : batch.get(1).asArrayValue()) {
      events.add(event(e));
    }
    Integer rank = batch.size() > 2 && !batch.get(2).isNilValue()
        ? batch.get(2).asIntegerValue().toInt() : null;
    return new Batch(batch.get(0).asFloatValue().toDouble(), events, rank);
  }

  private static Event event(Value v) {
    Value[] f; // fields after the tag, in vLLM's declaration order
    String type;
    if (v.isArrayValue()) {
      List<Value> a = v.asArrayValue().list();
      type = a.get(0).asStringValue().asString();
      f = a.subList(1, a.size()).toArray(Value[]::new);
    } else {
      Map<Value, Value> m = ((MapValue) v).map();
      type = m.get(ValueFactory.newString("type")).asStringValue().asString();
      String[] names = type.equals("BlockStored") ? STORED_FIELDS
          : type.equals("BlockRemoved") ? REMOVED_FIELDS : new String[0];
      f = new Value[names.length];
      for (int i = 0; i < names.length; i++) {
        f[i] = m.getOrDefault(ValueFactory.newString(names[i]), ValueFactory.newNil());
      }
    }
    return switch (type) {
      case "BlockStored" -> new Event(type, hashes(f[0]),
          f[1].isNilValue() ? null : unsigned(f[1]), ints(f[2]), f[3].asIntegerValue().toInt(),
          at(f, 5).isNilValue() ? null : at(f, 5).asStringValue().asString(),
          at(f, 7).isNilValue() ? null : at(f, 7).asArrayValue().list());
      case "BlockRemoved" -> new Event(type, hashes(f[0]), null, null, 0,
          at(f, 1).isNilValue() ? null : at(f, 1).asStringValue().asString(), null);
      case "AllBlocksCleared" -> new Event(type, new long[0], null, null, 0, null, null);
      default -> throw new IllegalArgumentException("unknown KV event tag " + type);
    };
  }

  private static Value at(Value[] fields, int i) {
    return i < fields.length ? fields[i] : ValueFactory.newNil();
  }

  private static long[] hashes(Value v) {
    List<Value> list = v.asArrayValue().list();
    long[] out = new long[list.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = unsigned(list.get(i));
    }
    return out;
  }

  /** An unsigned 64-bit integer (uint64 above 2^63 arrives as a BigInteger) as Java's long bits. */
  private static long unsigned(Value v) {
    BigInteger b = v.asIntegerValue().asBigInteger();
    if (b.signum() < 0 || b.bitLength() > 64) {
      throw new IllegalArgumentException("block hash " + b + " is not an unsigned 64-bit integer");
    }
    return b.longValue();
  }

  private static int[] ints(Value v) {
    List<Value> list = v.asArrayValue().list();
    int[] out = new int[list.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = list.get(i).asIntegerValue().toInt();
    }
    return out;
  }
}
