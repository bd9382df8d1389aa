package dev.radixserve.cache;

/**
 * What an insert did.
 *
 * @param alreadyCachedTokens leading tokens that were in the tree before this insert
 * @param duplicateBlockIds the caller's blocks the tree did not take; the caller frees them
 * @param node the node whose lock protects every block of the inserted tokens: it ends where they
 *     end or, when they end inside a block the tree already held, at the end of that block
 */
public record InsertResult(int alreadyCachedTokens, int[] duplicateBlockIds, NodeHandle node) {}
