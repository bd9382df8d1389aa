package dev.radixserve.server.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.radixserve.server.metrics.ServerMetrics;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Generation parsing never queues behind tokenize work that fills its own pool. */
class WorkersTest {

  @Test
  void generationRunsWhileEveryUtilityThreadIsBusy() throws Exception {
    try (ServerMetrics metrics = new ServerMetrics();
        Workers workers = new Workers(2, new Responses(metrics))) {
      ChannelHandlerContext ctx = new EmbeddedChannel(new ChannelInboundHandlerAdapter())
          .pipeline().firstContext(); // used only to answer a failure; none happens here
      CountDownLatch release = new CountDownLatch(1);
      CountDownLatch utilityStarted = new CountDownLatch(1);
      CountDownLatch generationRan = new CountDownLatch(1);
      // cores / 2 = 1 utility thread: one giant tokenization holds it, two more queue behind
      for (int i = 0; i < 3; i++) {
        workers.utility(ctx, () -> {
          utilityStarted.countDown();
          await(release);
        });
      }
      utilityStarted.await();
      workers.generation(ctx, generationRan::countDown);
      generationRan.await(); // returns only because generation has threads of its own
      assertEquals(0, generationRan.getCount());
      assertFalse(release.await(0, TimeUnit.SECONDS)); // the utility work is still blocked
      release.countDown();
    }
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
