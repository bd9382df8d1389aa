package dev.radixserve.model.tokenizer;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * GPT-2's vocabulary as BPE merges, derived from the r50k_base ranks that JTokkit ships (the
 * tiktoken spelling of GPT-2's encoder: token bytes and rank, where rank == GPT-2 id).
 *
 * <p>Merges are recovered the standard tiktoken-to-Hugging-Face way: a multi-byte token of rank
 * r was made by merging the two parts that byte-level BPE over ranks below r leaves of its bytes.
 * Its merge rank is then r, so merge order is token order.
 *
 * @param tokenBytes bytes per id, 50,257 entries; id 50256 is {@code <|endoftext|>}
 * @param merges {left id, right id} in rank order
 */
record R50kVocabulary(byte[][] tokenBytes, List<int[]> merges) {

  static final String RESOURCE = "/com/knuddels/jtokkit/r50k_base.tiktoken";
  static final int END_OF_TEXT_ID = 50256;

  static R50kVocabulary load() {
    byte[][] tokens = new byte[END_OF_TEXT_ID + 1][];
    Map<String, Integer> ranks = new HashMap<>(END_OF_TEXT_ID * 2);
    try (InputStream in = R50kVocabulary.class.getResourceAsStream(RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException("JTokkit's " + RESOURCE + " is not on the class path");
      }
      BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.US_ASCII));
      for (String line; (line = reader.readLine()) != null; ) {
        if (line.isBlank()) {
          continue;
        }
        int space = line.indexOf(' ');
        byte[] bytes = Base64.getDecoder().decode(line.substring(0, space));
        int rank = Integer.parseInt(line.substring(space + 1).trim());
        tokens[rank] = bytes;
        ranks.put(BpeTokenizer.latin1(bytes), rank);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("reading " + RESOURCE, e);
    }
    tokens[END_OF_TEXT_ID] = BpeTokenizer.END_OF_TEXT.getBytes(StandardCharsets.US_ASCII);
    for (int id = 0; id < tokens.length; id++) {
      if (tokens[id] == null) {
        throw new IllegalStateException(RESOURCE + " has no token of rank " + id);
      }
    }
    List<int[]> merges = new ArrayList<>(END_OF_TEXT_ID - 256);
    for (int rank = 0; rank < END_OF_TEXT_ID; rank++) {
      if (tokens[rank].length > 1) {
        merges.add(splitOf(tokens[rank], rank, ranks));
      }
    }
    return new R50kVocabulary(tokens, merges);
  }

  /** The two parts BPE over ranks below {@code maxRank} leaves of {@code bytes}, as ids. */
  private static int[] splitOf(byte[] bytes, int maxRank, Map<String, Integer> ranks) {
    List<String> parts = new ArrayList<>(bytes.length);
    for (byte b : bytes) {
      parts.add(BpeTokenizer.latin1(new byte[] {b}));
    }
    while (parts.size() > 2) {
      int best = -1;
      int bestRank = maxRank;
      for (int i = 0; i + 1 < parts.size(); i++) {
        Integer r = ranks.get(parts.get(i) + parts.get(i + 1));
        if (r != null && r < bestRank) {
          best = i;
          bestRank = r;
        }
      }
      if (best < 0) {
        break;
      }
      parts.set(best, parts.get(best) + parts.remove(best + 1));
    }
    if (parts.size() != 2) {
      throw new IllegalStateException(
          "token of rank " + maxRank + " splits into " + parts.size() + " parts, expected 2");
    }
    return new int[] {ranks.get(parts.get(0)), ranks.get(parts.get(1))};
  }
}
