package dev.radixserve.bench;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntConsumer;

/**
 * Sends a workload the way {@code vllm bench serve} does: at most {@code maxConcurrency} requests
 * in flight, and, with a request rate, Poisson arrivals (exponential gaps from a seeded random).
 * Requests become ready in planned order; turn n+1 of a session becomes ready only when turn n
 * completed, so for sessioned workloads the actual send order follows completions.
 */
final class LoadDriver {

  private final RequestSender sender;
  private final int maxConcurrency;
  private final Double requestRate;
  private final long seed;

  /**
   * @param maxConcurrency most requests in flight ({@code Integer.MAX_VALUE}: no limit)
   * @param requestRate requests per second, or null to send as fast as concurrency allows
   */
  LoadDriver(RequestSender sender, int maxConcurrency, Double requestRate, long seed) {
    if (maxConcurrency < 1) {
      throw new IllegalArgumentException("--concurrency must be >= 1, got " + maxConcurrency);
    }
    if (requestRate != null && !(requestRate > 0)) {
      throw new IllegalArgumentException("--request-rate must be > 0, got " + requestRate);
    }
    this.sender = sender;
    this.maxConcurrency = maxConcurrency;
    this.requestRate = requestRate;
    this.seed = seed;
  }

  /** Runs every request; returns their records in planned order. {@code onDone} gets the count done. */
  List<RequestRecord> run(Workload workload, IntConsumer onDone) throws InterruptedException {
    Map<Integer, List<BenchRequest>> sessions = new HashMap<>();
    for (BenchRequest r : workload.requests()) {
      sessions.computeIfAbsent(r.session(), s -> new ArrayList<>()).add(r);
    }
    sessions.values().forEach(turns -> turns.sort(Comparator.comparingInt(BenchRequest::turn)));
    LinkedBlockingQueue<BenchRequest> ready = new LinkedBlockingQueue<>();
    for (BenchRequest r : workload.requests()) {
      if (sessions.get(r.session()).getFirst() == r) {
        ready.add(r);
      }
    }
    List<RequestRecord> records = Collections.synchronizedList(new ArrayList<>());
    Semaphore inFlight = new Semaphore(maxConcurrency);
    AtomicInteger completed = new AtomicInteger();
    Random arrivals = new Random(seed);
    long start = System.nanoTime();
    double nextArrivalS = 0;
    try (ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor()) {
      for (int sendOrder = 0; sendOrder < workload.size(); sendOrder++) {
        if (requestRate != null) {
          sleepUntil(start + (long) (nextArrivalS * 1e9));
          nextArrivalS += -Math.log(1 - arrivals.nextDouble()) / requestRate;
        }
        inFlight.acquire();
        BenchRequest request = ready.take();
        int order = sendOrder;
        executor.submit(() -> {
          try {
            records.add(sender.send(request, order));
          } finally {
            List<BenchRequest> turns = sessions.get(request.session());
            int next = turns.indexOf(request) + 1;
            if (next < turns.size()) {
              ready.add(turns.get(next));
            }
            inFlight.release();
            onDone.accept(completed.incrementAndGet());
          }
        });
      }
    }
    if (records.size() != workload.size()) {
      throw new IllegalStateException(
          "sent " + workload.size() + " requests, recorded " + records.size());
    }
    List<RequestRecord> ordered = new ArrayList<>(records);
    ordered.sort(Comparator.comparingInt(RequestRecord::index));
    return ordered;
  }

  private static void sleepUntil(long deadlineNanos) throws InterruptedException {
    long wait = deadlineNanos - System.nanoTime();
    if (wait > 0) {
      TimeUnit.NANOSECONDS.sleep(wait);
    }
  }
}
