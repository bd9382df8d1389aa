package dev.radixserve.server.http;

import dev.radixserve.server.api.ApiException;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http.FullHttpMessage;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpUtil;

/**
 * Collects a request body up to the limit. Netty's own refusals have empty bodies; here each is
 * an OpenAI-shaped error: 413 for a body over the limit (announced by {@code Content-Length},
 * with or without {@code Expect: 100-continue}, or grown past it while chunked) and 417 for an
 * expectation other than {@code 100-continue}. A refused expectation closes the connection (the
 * client may send the body anyway); a refused keep-alive body is read and dropped, so the
 * client reads the 413 instead of a reset, and the next request is served.
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
    String expect = start.headers().get(HttpHeaderNames.EXPECT);
    Object netty = super.newContinueResponse(start, max, pipeline);
    if (!(netty instanceof FullHttpResponse r) || r.status().code() < 400) {
      return netty;
    }
    int status = r.status().code();
    r.release();
    FullHttpResponse error = responses.errorResponse(start.protocolVersion(), status == 413
        ? tooLarge() : new ApiException(417, "invalid_request_error", null,
            "expectation_failed", "unsupported expectation: Expect: " + expect));
    error.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
    return error;
  }

  @Override
  protected boolean closeAfterContinueResponse(Object msg) {
    return msg instanceof FullHttpResponse r && r.status().code() >= 400;
  }

  @Override
  protected void handleOversizedMessage(ChannelHandlerContext ctx, HttpMessage oversized) {
    FullHttpResponse error = responses.errorResponse(oversized.protocolVersion(), tooLarge());
    if (oversized instanceof FullHttpMessage || !HttpUtil.isKeepAlive(oversized)) {
      error.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
      ctx.writeAndFlush(error).addListener(ChannelFutureListener.CLOSE);
    } else {
      ctx.writeAndFlush(error).addListener(ChannelFutureListener.CLOSE_ON_FAILURE);
    }
  }

  private ApiException tooLarge() {
    return new ApiException(413, "invalid_request_error", null, "request_too_large",
        "request body over " + maxBody + " bytes (max-request-body)");
  }
}
