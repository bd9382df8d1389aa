package dev.radixserve.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class CacheNamespaceTest {

  @Test
  void saltsAreTheirOwnNamespacesAndTheDefaultHasNone() {
    assertNull(CacheNamespace.saltOf(CacheNamespace.DEFAULT));
    assertEquals("", CacheNamespace.saltOf(CacheNamespace.ofSalt("")));
    assertEquals("t1", CacheNamespace.saltOf(CacheNamespace.ofSalt("t1")));
    assertNotEquals(CacheNamespace.DEFAULT, CacheNamespace.ofSalt(""));
    assertThrows(IllegalArgumentException.class, () -> CacheNamespace.saltOf("other:x"));
  }

  /**
   * A long-context twin is a namespace of its own, and hashes under a salt no request can give:
   * its blocks (keys rotated otherwise) never pass for the usual context's, salted or not.
   */
  @Test
  void longContextTwinsNeverHashLikeAnyUsualNamespace() {
    String plain = CacheNamespace.longContext(CacheNamespace.DEFAULT);
    String salted = CacheNamespace.longContext(CacheNamespace.ofSalt("t1"));
    assertTrue(CacheNamespace.isLongContext(plain));
    assertFalse(CacheNamespace.isLongContext(CacheNamespace.ofSalt("long:x")));
    assertNotEquals(plain, salted);
    assertEquals(CacheNamespace.LONG_CONTEXT_SALT, CacheNamespace.saltOf(plain));
    assertEquals(CacheNamespace.LONG_CONTEXT_SALT + "t1", CacheNamespace.saltOf(salted));
    assertNotEquals(CacheNamespace.saltOf(CacheNamespace.ofSalt("t1")),
        CacheNamespace.saltOf(salted));
    assertThrows(IllegalArgumentException.class, () -> CacheNamespace.longContext(plain));
    assertThrows(IllegalArgumentException.class, () -> CacheNamespace.longContext("other:x"));
  }
}
