package dev.radixserve.server.config;

/** Order in which waiting requests are admitted. */
public enum SchedulePolicy {
  /** Longest cached prefix first (falls back to arrival order when the queue is long). */
  LPM,
  /** First come, first served. */
  FCFS
}
