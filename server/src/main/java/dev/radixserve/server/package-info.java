/** OpenAI-compatible HTTP server, engine loop, scheduler, metrics and CLI. */
package dev.radixserve.server;
