package dev.radixserve.server.http;

import dev.radixserve.server.api.ApiException;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpMessage;
import io.netty.handler.codec.http.HttpExpectationFailedEvent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpUtil;

/**
 * Collects a request body up to the limit. Netty's own refusals have empty bodies; here each is
 * an OpenAI-shaped error. A body over the limit gets 413 at once, before it is read, whether
 * announced by {@code Content-Length} (with {@code Expect: 100-continue} too: no 100 is sent)
 * or grown past it while chunked; on a keep-alive connection an announced body is then read and
 * dropped, so the client reads the 413 and the next request is served. An expectation other
 * than {@code 100-continue} is left for {@link RequestGuard} to answer with 417.
 */
final class BodyAggregator extends HttpObjectAggregator {

  private final Responses responses;
  private final int maxBody;

  BodyAggregator(int maxBody, Responses responses) {
    super(maxBody);
    this.maxBody = maxBody;
    this.responses = responses;
  }

  @Override
  protected Object newContinueResponse(HttpMessage start, int max, ChannelPipeline pipeline) {
    if (HttpUtil.is100ContinueExpected(start) && !isContentLengthInvalid(start, max)) {
      start.headers().remove(HttpHeaderNames.EXPECT);
      return new DefaultFullHttpResponse(start.protocolVersion(), HttpResponseStatus.CONTINUE,
          Unpooled.EMPTY_BUFFER);
    }
    return null;
  }

  @Override
  protected void handleOversizedMessage(ChannelHandlerContext ctx, HttpMessage oversized) {
    ApiException e = new ApiException(413, "invalid_request_error", null, "request_too_large",
        "request body over " + maxBody + " bytes (max-request-body)");
    if (oversized instanceof FullHttpMessage || !HttpUtil.isKeepAlive(oversized)) {
      responses.errorAndClose(ctx, e);
    } else {
      if (HttpUtil.is100ContinueExpected(oversized)) {
        // the client waits for a 100 that never comes and sends no body: the decoder must not
        // read the next request as this one's body (Netty's own handling does the same)
        ctx.pipeline().fireUserEventTriggered(HttpExpectationFailedEvent.INSTANCE);
      }
      ctx.writeAndFlush(responses.errorResponse(oversized.protocolVersion(), e))
          .addListener(ChannelFutureListener.CLOSE_ON_FAILURE);
    }
  }
}
