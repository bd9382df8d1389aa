package dev.radixserve.server.http;

import dev.radixserve.server.api.ApiException;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.LastHttpContent;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The read deadlines of one connection (slowloris and idle keep-alive defence), one timer at a
 * time, each started when its phase begins and never extended by a trickle of bytes:
 *
 * <pre>
 *   idle    no request in progress, every request answered   → close (nothing to answer)
 *   head    bytes of a request arrived, its head did not yet → 408, close
 *   body    its head arrived, its body did not end yet       → 408, close
 *   busy    a request is complete but not answered yet        → no deadline (generation)
 * </pre>
 *
 * A pipelined request read while an earlier one is unanswered is not timed until its turn. (The
 * codec does not tell how much of a read it consumed, so bytes of a next head that came in the
 * same read as a complete request are only noticed with the next read; until then the idle
 * deadline applies: either way the connection is bounded.) Sits right after the codec;
 * {@link #bytesWatcher()} goes before it to see raw bytes.
 */
final class ReadTimeouts extends ChannelDuplexHandler {

  private enum Phase { IDLE, HEAD, BODY, BUSY }

  private enum Partial { NONE, HEAD, BODY }

  private final Duration idle;
  private final Duration head;
  private final Duration body;
  private final Responses responses;
  private final ConnectionLimit.State connection;
  private Partial partial = Partial.NONE;
  private long heads;
  private long answered;
  private Phase timed;
  private ScheduledFuture<?> timer;
  private ChannelHandlerContext ctx;

  /** @param connection told whether this connection is idle (may be closed to make room) */
  ReadTimeouts(Duration idle, Duration head, Duration body, Responses responses,
      ConnectionLimit.State connection) {
    this.connection = connection;
    this.idle = idle;
    this.head = head;
    this.body = body;
    this.responses = responses;
  }

  /** Goes before the codec: any bytes on an idle connection start a request's head. */
  ChannelHandler bytesWatcher() {
    return new ChannelInboundHandlerAdapter() {
      @Override
      public void channelRead(ChannelHandlerContext c, Object msg) {
        if (partial == Partial.NONE) {
          partial = Partial.HEAD;
          update();
        }
        c.fireChannelRead(msg);
      }
    };
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    this.ctx = ctx;
    if (ctx.channel().isActive()) {
      update();
    }
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) {
    update();
    ctx.fireChannelActive();
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (msg instanceof HttpRequest) {
      heads++;
      partial = Partial.BODY;
    }
    if (msg instanceof LastHttpContent) {
      partial = Partial.NONE;
    }
    update();
    ctx.fireChannelRead(msg);
  }

  @Override
  public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
    if (msg instanceof LastHttpContent && !(msg instanceof HttpResponse r
        && r.status().codeClass() == HttpStatusClass.INFORMATIONAL)) {
      answered++;
      update();
    }
    ctx.write(msg, promise);
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    cancel();
    ctx.fireChannelInactive();
  }

  @Override
  public void handlerRemoved(ChannelHandlerContext ctx) {
    cancel();
  }

  private Phase phase() {
    return switch (partial) {
      case HEAD -> answered >= heads ? Phase.HEAD : Phase.BUSY;
      case BODY -> answered >= heads - 1 ? Phase.BODY : Phase.BUSY;
      case NONE -> answered >= heads ? Phase.IDLE : Phase.BUSY;
    };
  }

  private void update() {
    Phase now = phase();
    // nothing to answer yet: a connection in these phases may be closed for a new one
    connection.idle(now == Phase.IDLE || now == Phase.HEAD);
    if (now == timed && (timer != null || now == Phase.BUSY)) {
      return; // the deadline of a phase is set once, when it begins
    }
    cancel();
    timed = now;
    Duration d = switch (now) {
      case IDLE -> idle;
      case HEAD -> head;
      case BODY -> body;
      case BUSY -> null;
    };
    if (d != null && ctx != null) {
      timer = ctx.executor().schedule(() -> expire(now), d.toMillis(), TimeUnit.MILLISECONDS);
    }
  }

  private void cancel() {
    if (timer != null) {
      timer.cancel(false);
      timer = null;
    }
  }

  private void expire(Phase phase) {
    timer = null;
    if (phase != timed || !ctx.channel().isActive()) {
      return;
    }
    if (phase == Phase.IDLE) {
      ctx.close();
      return;
    }
    ctx.channel().config().setAutoRead(false);
    responses.errorAndClose(ctx, new ApiException(408, "invalid_request_error", null,
        "request_timeout", "the request " + (phase == Phase.HEAD ? "head" : "body")
            + " did not arrive within " + (phase == Phase.HEAD ? head : body).toMillis() + " ms"));
  }
}
