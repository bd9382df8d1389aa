package dev.radixserve.server.http;

import dev.radixserve.server.api.ApiException;
import io.netty.channel.ChannelHandlerContext;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The threads that parse and tokenize off the event loops, in two pools sized from the cores:
 * generation requests, whose tokenizing is bounded by the model length, and the utility
 * endpoints ({@code /tokenize}, {@code /detokenize}), whose inputs may be as large as the body
 * limit, so a giant tokenization never queues a generation request behind it. A failure is
 * answered on the channel's event loop: 4xx for bad input, 500 (with a logged id) for a bug.
 */
final class Workers implements AutoCloseable {

  private static final Logger LOG = Logger.getLogger(Workers.class.getName());

  private final ExecutorService generation;
  private final ExecutorService utility;
  private final Responses responses;

  Workers(int cores, Responses responses) {
    this.generation = Executors.newFixedThreadPool(Math.max(2, cores),
        Thread.ofPlatform().name("radixserve-parse-", 0).daemon().factory());
    this.utility = Executors.newFixedThreadPool(Math.max(1, cores / 2),
        Thread.ofPlatform().name("radixserve-tokenize-", 0).daemon().factory());
    this.responses = responses;
  }

  void generation(ChannelHandlerContext ctx, Runnable work) {
    run(generation, ctx, work);
  }

  void utility(ChannelHandlerContext ctx, Runnable work) {
    run(utility, ctx, work);
  }

  private void run(ExecutorService pool, ChannelHandlerContext ctx, Runnable work) {
    try {
      pool.execute(() -> guarded(ctx, work));
    } catch (RejectedExecutionException e) {
      throw new ApiException(503, "server_error", null, "unavailable", "the server is stopping");
    }
  }

  private void guarded(ChannelHandlerContext ctx, Runnable work) {
    try {
      work.run();
    } catch (ApiException e) {
      ctx.executor().execute(() -> responses.error(ctx, e));
    } catch (RuntimeException | OutOfMemoryError e) {
      // an OutOfMemoryError here is this request's allocation: answer it rather than leave the
      // client hanging; the heap is free again once the request's objects are dropped
      String rid = UUID.randomUUID().toString();
      LOG.log(Level.SEVERE, "internal error, request id " + rid, e);
      ctx.executor().execute(() -> responses.error(ctx, new ApiException(500, "server_error",
          null, null, "internal error (request id " + rid + "): " + e)));
    }
  }

  @Override
  public void close() {
    generation.shutdownNow();
    utility.shutdownNow();
  }
}
