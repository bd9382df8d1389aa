package dev.radixserve.cache;

/**
 * The longest cached prefix of a query.
 *
 * @param matchedTokens a multiple of the block size
 * @param blockIds one per matched block, in order ({@code matchedTokens / B} of them)
 * @param node the deepest matched node (the root when nothing matched)
 */
public record MatchResult(int matchedTokens, int[] blockIds, NodeHandle node) {}
