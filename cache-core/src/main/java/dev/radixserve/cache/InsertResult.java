package dev.radixserve.cache;

/**
 * What an insert did.
 *
 * @param alreadyCachedTokens leading tokens that were in the tree before this insert
 * @param duplicateBlockIds the caller's blocks the tree did not take; the caller frees them
 * @param node the node that ends the inserted sequence (lock it to protect the whole path)
 */
public record InsertResult(int alreadyCachedTokens, int[] duplicateBlockIds, NodeHandle node) {}
