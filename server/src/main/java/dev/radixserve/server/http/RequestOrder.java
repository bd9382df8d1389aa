package dev.radixserve.server.http;

import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayDeque;

/**
 * Answers pipelined HTTP/1.1 requests in request order (RFC 9112 §9.3.2) by serving them one at a
 * time: a request that arrives while an earlier one is unanswered waits here, with its body, and
 * reading from the socket pauses until the response in flight is complete. Everything behind
 * this handler (keep-alive, aggregation, routing) thus sees a single request at a time. At most
 * the codec's pipeline depth (128) of requests can wait.
 */
final class RequestOrder extends ChannelDuplexHandler {

  private final ArrayDeque<Object> waiting = new ArrayDeque<>();
  private boolean inFlight;

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (!waiting.isEmpty() || (msg instanceof HttpRequest && inFlight)) {
      waiting.add(msg); // a later request, or the body of one
      ctx.channel().config().setAutoRead(false);
      return;
    }
    if (msg instanceof HttpRequest r) {
      start(ctx, r);
    }
    ctx.fireChannelRead(msg);
  }

  /** The request now answered; its version is the responses' (1.1 when it could not be read). */
  private void start(ChannelHandlerContext ctx, HttpRequest r) {
    inFlight = true;
    ctx.channel().attr(Responses.VERSION).set(r.decoderResult().isSuccess()
        ? r.protocolVersion() : HttpVersion.HTTP_1_1);
  }

  @Override
  public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
    boolean ends = msg instanceof LastHttpContent
        && !(msg instanceof HttpResponse r && r.status().codeClass() == HttpStatusClass.INFORMATIONAL);
    ctx.write(msg, promise);
    if (ends && inFlight) {
      inFlight = false;
      // after this write is queued, so the next response can only follow it
      ctx.executor().execute(() -> next(ctx));
    }
  }

  private void next(ChannelHandlerContext ctx) {
    if (inFlight || !ctx.channel().isActive()) {
      return;
    }
    if (!waiting.isEmpty()) {
      Object head = waiting.poll();
      start(ctx, (HttpRequest) head);
      ctx.fireChannelRead(head);
      while (!waiting.isEmpty() && !(waiting.peek() instanceof HttpRequest)) {
        ctx.fireChannelRead(waiting.poll());
      }
      ctx.fireChannelReadComplete();
    }
    if (waiting.isEmpty() && !ctx.channel().config().isAutoRead()) {
      ctx.channel().config().setAutoRead(true);
    }
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    release();
    ctx.fireChannelInactive();
  }

  @Override
  public void handlerRemoved(ChannelHandlerContext ctx) {
    release();
  }

  private void release() {
    for (Object m = waiting.poll(); m != null; m = waiting.poll()) {
      if (m instanceof HttpObject) {
        ReferenceCountUtil.release(m);
      }
    }
  }
}
