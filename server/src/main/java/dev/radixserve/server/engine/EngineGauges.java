package dev.radixserve.server.engine;

/** Sizes the engine publishes after every step, for gauges read from other threads. */
public record EngineGauges(int runningRequests, int waitingRequests, int totalBlocks,
    int freeBlocks, int cachedBlocks) {}
