package dev.radixserve.server.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Reads a request body as exactly one JSON object in strict UTF-8 (RFC 8259): malformed UTF-8
 * (overlong forms such as {@code C0 80}, encoded surrogates, code points past U+10FFFF, stray
 * continuation bytes) and anything after the value but white space are refused with 400.
 */
public final class JsonBody {

  private static final ObjectMapper JSON = new ObjectMapper()
      .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

  private JsonBody() {}

  public static JsonNode readObject(byte[] body) {
    checkUtf8(body);
    JsonNode node;
    try {
      node = JSON.readTree(body);
    } catch (JsonProcessingException e) {
      throw ApiException.badRequest(null, "malformed JSON: " + e.getOriginalMessage());
    } catch (IOException e) {
      throw ApiException.badRequest(null, "malformed JSON: " + e.getMessage());
    }
    if (node == null || !node.isObject()) {
      throw ApiException.badRequest(null, "the body must be a JSON object");
    }
    return node;
  }

  /** A token id in {@code [0, vocabSize)}; 400 for anything else (big numbers are not truncated). */
  public static int tokenId(JsonNode n, int vocabSize, String param) {
    if (!n.isIntegralNumber() || !n.canConvertToInt() || n.asInt() < 0 || n.asInt() >= vocabSize) {
      throw ApiException.badRequest(param, "token ids must be integers in [0, " + vocabSize
          + "), got " + n);
    }
    return n.asInt();
  }

  /** Decodes through a small buffer: validation allocates nothing in proportion to the body. */
  static void checkUtf8(byte[] body) {
    CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
        .onMalformedInput(CodingErrorAction.REPORT)
        .onUnmappableCharacter(CodingErrorAction.REPORT);
    ByteBuffer in = ByteBuffer.wrap(body);
    CharBuffer out = CharBuffer.allocate(4096);
    while (true) {
      CoderResult r = decoder.decode(in, out, true);
      if (r.isError()) {
        throw ApiException.badRequest(null, "the body is not valid UTF-8 (byte offset "
            + in.position() + ")");
      }
      out.clear();
      if (r.isUnderflow()) {
        break;
      }
    }
    if (decoder.flush(out).isError()) {
      throw ApiException.badRequest(null, "the body is not valid UTF-8");
    }
  }
}
