package dev.radixserve.server.kvevents;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.radixserve.cache.BlockHasher;
import dev.radixserve.cache.CacheNamespace;
import java.util.HexFormat;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * The published hash against values computed outside Java: Debian's python3-cbor2 (5.4.6),
 * {@code cbor2.dumps([parent, tokens, extra], canonical=True)} fed to a textbook FNV-1a-64, model
 * "gpt2", blocks of 4 over the tokens below (edge sizes of every CBOR integer head).
 */
class BlockHasherTest {

  private static final int[] TOKENS = IntStream.concat(IntStream.range(50236, 50256),
      IntStream.of(0, 1, 23, 24, 255, 256, 65535, 65536)).toArray();

  @Test
  void matchesCbor2AndFnvComputedOutsideJava() {
    BlockHasher h = new BlockHasher("gpt2", 4);
    assertEquals("14904869484748066971", Long.toUnsignedString(h.root()));
    long[] plain = h.chain("", TOKENS, 7);
    assertEquals("8421936500703654952", Long.toUnsignedString(plain[0]));
    assertEquals("4637414730356740620", Long.toUnsignedString(plain[1]));
    assertEquals("12543534217978412692", Long.toUnsignedString(plain[2]));
    assertEquals("3050911812343728824", Long.toUnsignedString(plain[6]));
    long[] salted = h.chain(CacheNamespace.ofSalt("tenant-ä"), TOKENS, 3);
    assertEquals("7083369063140820735", Long.toUnsignedString(salted[0]));
    assertEquals("14266204830776067966", Long.toUnsignedString(salted[1]));
    assertEquals("3582149105213821427", Long.toUnsignedString(salted[2]));
  }

  @Test
  void theReferenceImplementationAgreesAndEncodesLikeCbor2() {
    // cbor2.dumps([root, [1, 300], None], canonical=True).hex()
    assertEquals("831bced8bbd3b5f7d09b820119012cf6", HexFormat.of().formatHex(
        ReferenceBlockHash.cbor(new Object[] {ReferenceBlockHash.root("gpt2"), new int[] {1, 300},
            null})));
    BlockHasher h = new BlockHasher("radixserve-embedded-gpt2", 4);
    for (String salt : new String[] {"", "a", "tenant-b"}) {
      assertArrayEquals(ReferenceBlockHash.chain("radixserve-embedded-gpt2", salt, TOKENS, 4),
          h.chain(salt.isEmpty() ? CacheNamespace.DEFAULT : CacheNamespace.ofSalt(salt), TOKENS, 7),
          salt);
    }
  }

  @Test
  void aSaltChangesEveryBlockAndOnlyWholeBlocksAreHashed() {
    BlockHasher h = new BlockHasher("gpt2", 4);
    long[] plain = h.chain("", TOKENS, 7);
    long[] a = h.chain(CacheNamespace.ofSalt("a"), TOKENS, 7);
    long[] b = h.chain(CacheNamespace.ofSalt("b"), TOKENS, 7);
    for (int i = 0; i < 7; i++) {
      assertNotEquals(plain[i], a[i]);
      assertNotEquals(a[i], b[i]);
    }
    assertEquals("8 blocks of 4 tokens need 32 tokens, the path has 28",
        assertThrows(IllegalArgumentException.class, () -> h.chain("", TOKENS, 8)).getMessage());
  }
}
