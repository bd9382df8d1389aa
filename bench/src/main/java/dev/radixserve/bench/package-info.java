/**
 * The {@code bench} tool: seeded prefix-cache workloads sent as token-id prompts to any
 * OpenAI-compatible server, with per-request latency and cached-token measurements, the
 * theoretical maximum of cached tokens, a summary table, JSON output and a PNG chart.
 */
package dev.radixserve.bench;
