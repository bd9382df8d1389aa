package dev.radixserve.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A bare HTTP/1.x client over one socket: it sends exactly the bytes it is given (what no
 * well-behaved client would send, too) and parses whatever comes back, framed by
 * Content-Length, chunked encoding or the end of the connection. A read that stalls for
 * {@link #STALL_MS} fails the test: the server hung.
 */
public final class RawHttp {

  static final int STALL_MS = 60_000;
  private static final ObjectMapper JSON = new ObjectMapper();

  /** One response as it came over the wire. */
  public record Response(String version, int status, Map<String, String> headers, byte[] body) {
    public String text() {
      return new String(body, StandardCharsets.UTF_8);
    }

    public JsonNode json() {
      try {
        return JSON.readTree(body);
      } catch (IOException e) {
        throw new AssertionError("not JSON: " + text(), e);
      }
    }

    public String header(String name) {
      return headers.get(name.toLowerCase(Locale.ROOT));
    }
  }

  private RawHttp() {}

  /** A request with the given head lines (no Content-Length is added) and body. */
  public static byte[] request(String head, String body) {
    return (head.replace("\n", "\r\n") + "\r\n" + body).getBytes(StandardCharsets.UTF_8);
  }

  /** A POST with Host, Content-Length and the extra header lines. */
  public static byte[] post(String path, String body, String... headers) {
    byte[] b = body.getBytes(StandardCharsets.UTF_8);
    StringBuilder head = new StringBuilder("POST " + path + " HTTP/1.1\r\nHost: localhost\r\n");
    for (String h : headers) {
      head.append(h).append("\r\n");
    }
    head.append("Content-Length: ").append(b.length).append("\r\n\r\n");
    return concat(head.toString().getBytes(StandardCharsets.ISO_8859_1), b);
  }

  public static byte[] get(String path, String... headers) {
    StringBuilder head = new StringBuilder("GET " + path + " HTTP/1.1\r\nHost: localhost\r\n");
    for (String h : headers) {
      head.append(h).append("\r\n");
    }
    return head.append("\r\n").toString().getBytes(StandardCharsets.ISO_8859_1);
  }

  public static byte[] concat(byte[]... parts) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (byte[] p : parts) {
      out.writeBytes(p);
    }
    return out.toByteArray();
  }

  /** Sends {@code bytes} and reads every response until the server closes the connection. */
  public static List<Response> exchange(int port, byte[] bytes) {
    return exchange(port, bytes, false);
  }

  /** As {@link #exchange(int, byte[])}; responses to {@code HEAD} have no body, whatever they say. */
  public static List<Response> exchange(int port, byte[] bytes, boolean head) {
    try (Socket s = new Socket("127.0.0.1", port)) {
      s.setSoTimeout(STALL_MS);
      try {
        s.getOutputStream().write(bytes);
        s.getOutputStream().flush();
      } catch (IOException refusedEarly) {
        // the server may answer and close before it has read everything: read what it sent
      }
      return readAll(s.getInputStream(), head);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Every response on the stream until it ends; a stalled read is an assertion failure. */
  public static List<Response> readAll(InputStream in) throws IOException {
    return readAll(in, false);
  }

  private static List<Response> readAll(InputStream in, boolean head) throws IOException {
    List<Response> out = new ArrayList<>();
    try {
      for (Response r = read(in, head); r != null; r = read(in, head)) {
        out.add(r);
      }
    } catch (SocketTimeoutException e) {
      throw new AssertionError("the server stalled for " + STALL_MS + " ms after " + out, e);
    } catch (IOException reset) {
      // a reset after the last response counts as the end; what was read stays checked
    }
    return out;
  }

  /** The next response, or null at the end of the stream. */
  public static Response read(InputStream in) throws IOException {
    return read(in, false);
  }

  private static Response read(InputStream in, boolean head) throws IOException {
    String status = line(in);
    if (status == null) {
      return null;
    }
    String[] parts = status.split(" ", 3);
    Map<String, String> headers = new LinkedHashMap<>();
    for (String h = line(in); h != null && !h.isEmpty(); h = line(in)) {
      int colon = h.indexOf(':');
      headers.put(h.substring(0, colon).strip().toLowerCase(Locale.ROOT), h.substring(colon + 1).strip());
    }
    int code = Integer.parseInt(parts[1]);
    byte[] body;
    if (head || code / 100 == 1 || code == 204 || code == 304) {
      body = new byte[0];
    } else if ("chunked".equalsIgnoreCase(headers.get("transfer-encoding"))) {
      body = chunked(in);
    } else if (headers.containsKey("content-length")) {
      body = in.readNBytes(Integer.parseInt(headers.get("content-length")));
    } else {
      body = in.readAllBytes();
    }
    return new Response(parts[0], code, headers, body);
  }

  private static byte[] chunked(InputStream in) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    while (true) {
      int size = Integer.parseInt(line(in).split(";")[0].strip(), 16);
      if (size == 0) {
        while (!line(in).isEmpty()) {
          // trailers
        }
        return out.toByteArray();
      }
      out.writeBytes(in.readNBytes(size));
      line(in);
    }
  }

  private static String line(InputStream in) throws IOException {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    for (int c = in.read(); c != -1; c = in.read()) {
      if (c == '\n') {
        String s = b.toString(StandardCharsets.ISO_8859_1);
        return s.endsWith("\r") ? s.substring(0, s.length() - 1) : s;
      }
      b.write(c);
    }
    return b.size() == 0 ? null : b.toString(StandardCharsets.ISO_8859_1);
  }
}
