package dev.radixserve.server.kvevents;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.radixserve.bench.KvEventDecoder;
import dev.radixserve.cache.BlockHasher;
import dev.radixserve.server.config.KvEventEncoding;
import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;

/**
 * The exact msgpack shapes of vLLM's structs, read back as a generic value tree: field order,
 * tags, omitted defaults, unsigned 64-bit hashes.
 */
class KvEventEncoderTest {

  private static final long BIG = 0xfedcba9876543210L; // above 2^63: must travel as uint64

  private static String tree(byte[] payload) throws IOException {
    try (MessageUnpacker u = MessagePack.newDefaultUnpacker(payload)) {
      return u.unpackValue().toJson();
    }
  }

  private static List<KvEvent> events() {
    return List.of(
        new KvEvent.BlockStored(new long[] {BIG, 7}, null, new int[] {1, 2, 3, 4}, 2, "t",
            KvEvent.MEDIUM),
        new KvEvent.BlockStored(new long[] {9}, BIG, new int[] {5, 6}, 2, null,
            KvEvent.MEDIUM_CPU), // a block offloaded to host memory
        new KvEvent.BlockRemoved(new long[] {BIG}, KvEvent.MEDIUM_DISK),
        new KvEvent.AllBlocksCleared());
  }

  @Test
  void arrayEncodingIsVllmsTaggedPositionalStructs() throws IOException {
    byte[] payload = new KvEventEncoder(KvEventEncoding.ARRAY).encode(1.5, events());
    assertEquals("[1.5,["
        + "[\"BlockStored\",[18364758544493064720,7],null,[1,2,3,4],2,null,\"GPU\",null,"
        + "[[\"t\"],null]],"
        + "[\"BlockStored\",[9],18364758544493064720,[5,6],2,null,\"CPU\",null],"
        + "[\"BlockRemoved\",[18364758544493064720],\"DISK\"],"
        + "[\"AllBlocksCleared\"]],0]", tree(payload));
  }

  @Test
  void mapEncodingIsVllmsTaggedMaps() throws IOException {
    byte[] payload = new KvEventEncoder(KvEventEncoding.MAP).encode(1.5, events());
    assertEquals("[1.5,["
        + "{\"type\":\"BlockStored\",\"block_hashes\":[18364758544493064720,7],"
        + "\"parent_block_hash\":null,\"token_ids\":[1,2,3,4],\"block_size\":2,\"lora_id\":null,"
        + "\"medium\":\"GPU\",\"lora_name\":null,\"extra_keys\":[[\"t\"],null]},"
        + "{\"type\":\"BlockStored\",\"block_hashes\":[9],"
        + "\"parent_block_hash\":18364758544493064720,\"token_ids\":[5,6],\"block_size\":2,"
        + "\"lora_id\":null,\"medium\":\"CPU\",\"lora_name\":null},"
        + "{\"type\":\"BlockRemoved\",\"block_hashes\":[18364758544493064720],\"medium\":\"DISK\"},"
        + "{\"type\":\"AllBlocksCleared\"}],0]", tree(payload));
  }

  @Test
  void bothEncodingsDecodeToTheSameEvents() {
    for (KvEventEncoding encoding : KvEventEncoding.values()) {
      KvEventDecoder.Batch b =
          KvEventDecoder.decode(new KvEventEncoder(encoding).encode(2.25, events()));
      assertEquals(2.25, b.ts());
      assertEquals(0, b.dataParallelRank());
      assertEquals(List.of("BlockStored", "BlockStored", "BlockRemoved", "AllBlocksCleared"),
          b.events().stream().map(KvEventDecoder.Event::type).toList());
      assertEquals(BIG, b.events().get(0).hashes()[0], encoding.name());
      assertEquals(BIG, b.events().get(1).parentHash());
      assertEquals("DISK", b.events().get(2).medium());
    }
  }

  @Test
  void tierChangesBecomeEventsWithTheirMediumAndAResetKeepsItsRemovals() {
    BlockHasher hasher = new BlockHasher("m", 2);
    List<KvEvent> events = KvEvent.of(List.of(
        new CacheChange.Removed("", new int[] {1, 2}, 0, 1),
        new CacheChange.TierStored("CPU", 5, null, new int[] {1, 2}, "t"),
        new CacheChange.Cleared(),
        new CacheChange.TierRemoved("DISK", 6)), hasher);
    long block0 = hasher.chain("", new int[] {1, 2}, 1)[0];
    assertEquals(List.of("BlockRemoved GPU [" + block0 + "]", "BlockStored CPU [5] null t",
            "AllBlocksCleared", "BlockRemoved DISK [6]"),
        events.stream().map(e -> switch (e) {
          case KvEvent.BlockStored s -> "BlockStored " + s.medium() + " "
              + java.util.Arrays.toString(s.hashes()) + " " + s.parentHash() + " " + s.salt();
          case KvEvent.BlockRemoved r -> "BlockRemoved " + r.medium() + " "
              + java.util.Arrays.toString(r.hashes());
          case KvEvent.AllBlocksCleared c -> "AllBlocksCleared";
        }).toList());
  }
}
