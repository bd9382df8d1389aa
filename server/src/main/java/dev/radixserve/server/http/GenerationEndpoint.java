package dev.radixserve.server.http;

import dev.radixserve.server.api.ApiException;
import dev.radixserve.server.api.GenerationRequest;
import dev.radixserve.server.api.JsonBody;
import dev.radixserve.server.api.RequestLimits;
import dev.radixserve.server.api.RequestParser;
import dev.radixserve.server.engine.EngineRejectedException;
import dev.radixserve.server.engine.EngineRequest;
import io.netty.channel.ChannelHandlerContext;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Logger;

/**
 * {@code /v1/completions} and {@code /v1/chat/completions}: parses, validates and tokenizes on
 * the generation workers (never the event loop, never behind {@code /tokenize} work), then
 * submits every prompt of the request to the engine at once, or none of them.
 */
final class GenerationEndpoint {

  private static final Logger LOG = Logger.getLogger(GenerationEndpoint.class.getName());

  private final HttpHandler.Context c;
  private final Responses responses;
  private final RequestParser parser;
  private final RequestLimits limits;
  private final Workers workers;
  /** Requests accepted here and not yet in the engine (parsing, or hopping back to the loop). */
  private final AtomicInteger admitting = new AtomicInteger();

  GenerationEndpoint(HttpHandler.Context c, Responses responses, Workers workers) {
    this.c = c;
    this.responses = responses;
    this.limits = c.limits();
    this.parser = c.requestParser();
    this.workers = workers;
  }

  /**
   * On the event loop.
   *
   * @param client who sent it, for fair shares ({@link ClientId})
   */
  void handle(ChannelHandlerContext ctx, byte[] body, boolean chat, String client) {
    if (!c.ready().getAsBoolean() || !c.engine().isAccepting()) {
      throw new ApiException(503, "server_error", null, "unavailable", "the server is not ready");
    }
    admitting.incrementAndGet();
    try {
      workers.generation(ctx, () -> {
        boolean handedOver = false;
        try {
          submit(ctx, body, chat, client);
          handedOver = true;
        } finally {
          if (!handedOver) {
            admitting.decrementAndGet();
          }
        }
      });
    } catch (ApiException e) {
      admitting.decrementAndGet();
      throw e;
    }
  }

  /**
   * Waits until every accepted generation request has reached the engine or been answered, so a
   * drain that starts now covers requests that were still being parsed.
   *
   * @return false if {@code deadlineNanos} (of {@link System#nanoTime}) came first
   */
  boolean awaitAdmitted(long deadlineNanos) throws InterruptedException {
    while (admitting.get() > 0) {
      if (System.nanoTime() >= deadlineNanos) {
        return false;
      }
      Thread.sleep(5);
    }
    return true;
  }

  private void submit(ChannelHandlerContext ctx, byte[] body, boolean chat, String client) {
    GenerationRequest g = parser.parse(JsonBody.readObject(body), chat);
    String id = (chat ? "chatcmpl-" : "cmpl-") + UUID.randomUUID().toString().replace("-", "");
    if (g.user() != null) {
      LOG.fine(() -> id + " user=" + g.user());
    }
    GenerationCall call = new GenerationCall(ctx, g, c.tokenizer(), c.engine(), responses, id,
        c.modelName());
    List<EngineRequest> engineRequests = new ArrayList<>(g.prompts().size());
    for (int i = 0; i < g.prompts().size(); i++) {
      int[] prompt = g.prompts().get(i);
      int maxTokens = limits.maxTokensFor(prompt.length, g.maxTokens(), chat ? "messages" : "prompt");
      engineRequests.add(new EngineRequest(call.engineId(i), id, prompt, g.params(), g.n(),
          maxTokens, g.ignoreEos(), g.namespace(), call.sink(i), g.echo() && g.logprobs() != null,
          client, g.priority(), g.constraint()));
    }
    ctx.executor().execute(() -> enqueue(ctx, g, call, engineRequests));
  }

  /**
   * On the event loop: submits, and only then opens the stream, so a refusal (429, 503) is a
   * plain error response; engine outputs hop onto this loop after this task, never before it.
   */
  private void enqueue(ChannelHandlerContext ctx, GenerationRequest g, GenerationCall call,
      List<EngineRequest> engineRequests) {
    try {
      submitAll(ctx, g, call, engineRequests);
    } finally {
      admitting.decrementAndGet();
    }
  }

  private void submitAll(ChannelHandlerContext ctx, GenerationRequest g, GenerationCall call,
      List<EngineRequest> engineRequests) {
    if (!ctx.channel().isActive()) {
      return;
    }
    List<String> submitted = new ArrayList<>();
    try {
      for (EngineRequest r : engineRequests) {
        c.engine().submit(r);
        submitted.add(r.id());
      }
    } catch (EngineRejectedException e) {
      submitted.forEach(c.engine()::abort);
      boolean full = e.reason() == EngineRejectedException.Reason.QUEUE_FULL;
      responses.error(ctx, new ApiException(full ? 429 : 503, full ? "rate_limit_error"
          : "server_error", null, null, e.getMessage()));
      return;
    }
    if (g.stream()) {
      call.startStream();
    }
    ctx.channel().closeFuture().addListener(f -> {
      if (!call.isDone()) {
        submitted.forEach(c.engine()::abort);
      }
    });
  }
}
