package dev.radixserve.server.kvtier;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

/** The host tier: exact copies, its budget in whole blocks, least recently used out first. */
class HostTierTest {

  private static final long BYTES = 32;
  private static final KvTier.Events NO_EVENTS = new KvTier.Events() {
    @Override
    public void stored(KvTier tier, BlockKey key) {}

    @Override
    public void removed(KvTier tier, long hash) {}
  };

  /** Events as "medium+hash" / "medium-hash". */
  private static KvTier.Events log(java.util.List<String> into) {
    return new KvTier.Events() {
      @Override
      public void stored(KvTier tier, BlockKey key) {
        into.add(tier.medium() + "+" + key.hash());
      }

      @Override
      public void removed(KvTier tier, long hash) {
        into.add(tier.medium() + "-" + hash);
      }
    };
  }

  private static BlockKey key(long hash) {
    return new BlockKey(hash, 0, new int[] {(int) hash});
  }

  private static MemorySegment kv(Arena arena, int seed) {
    MemorySegment s = arena.allocate(BYTES);
    s.fill((byte) seed);
    return s;
  }

  @Test
  void keepsTheMostRecentlyUsedBlocksWithinItsBudget() {
    java.util.List<String> events = new java.util.ArrayList<>();
    try (Arena arena = Arena.ofConfined();
        HostTier tier = new HostTier(2 * BYTES + 5, BYTES, log(events))) {
      tier.put(key(1), kv(arena, 1));
      tier.put(key(2), kv(arena, 2));
      assertTrue(tier.holds(key(1)));
      tier.put(key(3), kv(arena, 3)); // evicts 2, the least recently used
      assertFalse(tier.holds(key(2)));
      MemorySegment out = arena.allocate(BYTES);
      assertTrue(tier.read(key(1), out));
      assertArrayEquals(kv(arena, 1).toArray(ValueLayout.JAVA_BYTE),
          out.toArray(ValueLayout.JAVA_BYTE));
      assertTrue(tier.read(key(3), out));
      assertEquals(3, out.get(ValueLayout.JAVA_BYTE, 0));
      TierStats s = tier.stats();
      assertEquals(2, s.entries());
      assertEquals(2 * BYTES, s.bytes());
      assertEquals(3, s.stores());
      assertEquals(1, s.evictions());
      assertEquals(2, s.loads());
      assertFalse(tier.read(new BlockKey(3, 0, new int[] {4}), out)); // a colliding hash
      tier.clear();
      assertEquals(0, tier.stats().entries());
      assertFalse(tier.read(key(1), out));
      assertEquals(java.util.List.of("CPU+1", "CPU+2", "CPU-2", "CPU+3", "CPU-1", "CPU-3"),
          events);
    }
  }

  @Test
  void aBudgetBelowOneBlockIsRefused() {
    assertThrows(IllegalArgumentException.class, () -> new HostTier(BYTES - 1, BYTES, NO_EVENTS));
  }
}
