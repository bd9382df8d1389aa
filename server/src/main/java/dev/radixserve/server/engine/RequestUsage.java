package dev.radixserve.server.engine;

/**
 * Token counts of one finished request.
 *
 * @param promptTokens prompt length
 * @param completionTokens tokens generated over all choices
 * @param cachedTokens prompt tokens found in the prefix cache at (first) admission
 */
public record RequestUsage(int promptTokens, int completionTokens, int cachedTokens) {}
