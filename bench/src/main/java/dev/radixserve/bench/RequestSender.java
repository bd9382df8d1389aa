package dev.radixserve.bench;

/** Sends one request and measures it; never throws, a failure is a record with an error. */
interface RequestSender {

  RequestRecord send(BenchRequest request, int sendOrder);
}
