/** Radix prefix cache over a paged KV block pool. Single-threaded by contract; JDK only. */
package dev.radixserve.cache;
