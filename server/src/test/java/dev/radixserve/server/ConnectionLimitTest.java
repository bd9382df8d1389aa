package dev.radixserve.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.radixserve.server.RawHttp.Response;
import dev.radixserve.server.config.ServerConfig;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Beyond --max-connections a connection's request gets 503 in OpenAI's shape, then a close. */
class ConnectionLimitTest {

  @Test
  void connectionsOverTheLimitAreRefusedClearlyAndServedAgainOnceOthersClose() throws Exception {
    ServerConfig.Builder b = LocalServers.builder(32);
    b.maxConnections = 2;
    RadixServer server = RadixServer.start(b.build());
    int port = server.port();
    List<Socket> held = new ArrayList<>();
    try {
      for (int i = 0; i < 2; i++) {
        Socket s = new Socket("127.0.0.1", port);
        s.setSoTimeout(RawHttp.STALL_MS);
        s.getOutputStream().write(RawHttp.get("/version")); // keep-alive: stays open
        assertEquals(200, RawHttp.read(s.getInputStream()).status());
        held.add(s);
      }
      List<Response> refused = RawHttp.exchange(port, RawHttp.get("/version"));
      HttpFrontDoorTest.assertRefused(503, refused);
      assertEquals("too_many_connections", refused.getFirst().json().at("/error/code").asText());
      assertEquals("close", refused.getFirst().header("connection"));

      held.removeFirst().close();
      Response served = null;
      for (int attempt = 0; attempt < 200 && served == null; attempt++) {
        Response r = RawHttp.exchange(port, RawHttp.get("/version", "Connection: close")).getFirst();
        if (r.status() == 200) {
          served = r;
        } else {
          assertEquals(503, r.status(), r.text()); // the server has not seen the close yet
          Thread.sleep(20);
        }
      }
      assertNotNull(served, "a connection is served again once one of the held ones closed");
      assertEquals("0.1.0", served.json().get("version").asText());
      assertNull(server.inspect().integrityError());
    } finally {
      for (Socket s : held) {
        s.close();
      }
      server.shutdown(Duration.ofSeconds(5));
    }
  }
}
