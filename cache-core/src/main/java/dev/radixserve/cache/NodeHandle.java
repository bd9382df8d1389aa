package dev.radixserve.cache;

/**
 * An opaque reference to a tree node, for {@link PrefixCache#lock} and {@link PrefixCache#unlock}.
 * The root handle (an empty match) may be locked and unlocked freely; it protects nothing.
 */
public interface NodeHandle {

  /** The node's id, as {@link CacheListener} and {@link TreeSnapshot} report it. */
  long id();
}
