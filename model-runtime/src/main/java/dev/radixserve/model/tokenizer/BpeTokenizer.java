package dev.radixserve.model.tokenizer;

import dev.radixserve.model.Tokenizer;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.PriorityQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * GPT-2 byte-level BPE: special tokens are cut out first, the rest is split by GPT-2's
 * pre-tokenization regex, and each piece's UTF-8 bytes are merged by merge rank (lowest rank
 * first, leftmost on ties, as Hugging Face's tokenizers do). Immutable apart from a bounded
 * cache of encoded pieces, so it is safe to share between threads.
 */
public final class BpeTokenizer implements Tokenizer {

  /**
   * GPT-2's pattern. UNICODE_CHARACTER_CLASS makes {@code \s} match Unicode white space as
   * Python's {@code regex} module (which GPT-2 used) does.
   */
  static final Pattern PRETOKENIZE = Pattern.compile(
      "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+",
      Pattern.UNICODE_CHARACTER_CLASS);

  static final String END_OF_TEXT = "<|endoftext|>";
  private static final int CACHE_LIMIT = 100_000;
  private static final int CACHED_PIECE_MAX_CHARS = 128;

  private final byte[][] tokenBytes; // (id) -> bytes; null where the id is unused
  private final int[] byteToken = new int[256];
  private final Map<Long, Long> merges; // (left id, right id) -> (rank, merged id)
  private final Map<String, Integer> specials;
  private final Pattern specialPattern;
  private final int eosTokenId;
  private final Map<String, int[]> pieceCache = new ConcurrentHashMap<>();
  private final int longestToken; // bytes of the longest ordinary token

  /**
   * @param tokenBytes bytes of each token id (null for unused ids), special tokens included
   * @param mergePairs merges in rank order, each {left id, right id}; their concatenation must
   *     be a token
   * @param specials special tokens (matched literally in text before pre-tokenization)
   */
  BpeTokenizer(byte[][] tokenBytes, List<int[]> mergePairs, Map<String, Integer> specials) {
    this.tokenBytes = tokenBytes.clone();
    this.specials = Map.copyOf(specials);
    Integer eos = specials.get(END_OF_TEXT);
    if (eos == null) {
      throw new IllegalArgumentException("the vocabulary has no special token " + END_OF_TEXT);
    }
    this.eosTokenId = eos;
    Map<String, Integer> byBytes = new HashMap<>();
    for (int id = 0; id < tokenBytes.length; id++) {
      if (tokenBytes[id] != null && !this.specials.containsValue(id)) {
        byBytes.putIfAbsent(latin1(tokenBytes[id]), id);
      }
    }
    for (int b = 0; b < 256; b++) {
      Integer id = byBytes.get(String.valueOf((char) b));
      if (id == null) {
        throw new IllegalArgumentException("the vocabulary has no token for byte " + b);
      }
      byteToken[b] = id;
    }
    this.merges = new HashMap<>(mergePairs.size() * 2);
    for (int rank = 0; rank < mergePairs.size(); rank++) {
      int[] pair = mergePairs.get(rank);
      byte[] left = bytesOf(pair[0]);
      byte[] right = bytesOf(pair[1]);
      byte[] joined = Arrays.copyOf(left, left.length + right.length);
      System.arraycopy(right, 0, joined, left.length, right.length);
      Integer merged = byBytes.get(latin1(joined));
      if (merged == null) {
        throw new IllegalArgumentException(
            "merge " + rank + " (" + pair[0] + ", " + pair[1] + ") makes no token of the vocabulary");
      }
      merges.putIfAbsent(pairKey(pair[0], pair[1]), ((long) rank << 32) | merged);
    }
    this.specialPattern = specialPattern(this.specials);
    int longest = 1;
    for (int id = 0; id < tokenBytes.length; id++) {
      if (tokenBytes[id] != null && !this.specials.containsValue(id)) {
        longest = Math.max(longest, tokenBytes[id].length);
      }
    }
    this.longestToken = longest;
  }

  @Override
  public int[] encode(String text) {
    IntBuffer out = new IntBuffer(text.length() / 3 + 4);
    encode(text, out, Integer.MAX_VALUE);
    return out.toArray();
  }

  @Override
  public Optional<int[]> encodeAtMost(String text, int maxTokens) {
    IntBuffer out = new IntBuffer(Math.min(text.length(), maxTokens) / 3 + 4);
    return encode(text, out, maxTokens) ? Optional.of(out.toArray()) : Optional.empty();
  }

  /** Encodes into {@code out}; false (stopping early) once it would exceed {@code maxTokens}. */
  private boolean encode(String text, IntBuffer out, int maxTokens) {
    Matcher special = specialPattern.matcher(text);
    int start = 0;
    while (special.find()) {
      if (!encodeOrdinary(text.substring(start, special.start()), out, maxTokens)) {
        return false;
      }
      out.add(specials.get(special.group()));
      start = special.end();
    }
    return encodeOrdinary(text.substring(start), out, maxTokens) && out.size() <= maxTokens;
  }

  /** Encodes text treating special-token spellings as ordinary text. */
  public int[] encodeOrdinary(String text) {
    IntBuffer out = new IntBuffer(text.length() / 3 + 4);
    encodeOrdinary(text, out, Integer.MAX_VALUE);
    return out.toArray();
  }

  private boolean encodeOrdinary(String text, IntBuffer out, int maxTokens) {
    Matcher m = PRETOKENIZE.matcher(text);
    while (m.find()) {
      if (out.size() > maxTokens) {
        return false;
      }
      String piece = m.group();
      int[] ids = pieceCache.get(piece);
      if (ids == null) {
        // a piece makes at least (its bytes / longest token) tokens: a huge piece over the
        // limit is refused without merging it (BPE of n bytes costs O(n log n) time and memory)
        if ((long) out.size() + piece.length() / longestToken > maxTokens) {
          return false;
        }
        ids = bpe(piece.getBytes(StandardCharsets.UTF_8));
        if (piece.length() <= CACHED_PIECE_MAX_CHARS) {
          if (pieceCache.size() >= CACHE_LIMIT) {
            pieceCache.clear(); // crude bound: a hot working set refills quickly
          }
          pieceCache.put(piece, ids);
        }
      }
      out.addAll(ids);
    }
    return out.size() <= maxTokens;
  }

  /**
   * Merges one piece. Candidate merges sit in a heap keyed by (rank, position); stale entries
   * (a side already merged away) are skipped on pop, so a piece of n bytes costs O(n log n).
   */
  int[] bpe(byte[] bytes) {
    int n = bytes.length;
    int[] ids = new int[n];
    int[] next = new int[n];
    int[] prev = new int[n];
    for (int i = 0; i < n; i++) {
      ids[i] = byteToken[bytes[i] & 0xff];
      next[i] = i + 1 < n ? i + 1 : -1;
      prev[i] = i - 1;
    }
    if (n < 2) {
      return ids;
    }
    PriorityQueue<Long> heap = new PriorityQueue<>();
    for (int i = 0; i + 1 < n; i++) {
      pushCandidate(heap, ids, next, i);
    }
    int alive = n;
    while (!heap.isEmpty()) {
      long key = heap.poll();
      int i = (int) key;
      int j = next[i];
      if (ids[i] < 0 || j < 0) {
        continue;
      }
      Long merge = merges.get(pairKey(ids[i], ids[j]));
      if (merge == null || (merge >>> 32) != (key >>> 32)) {
        continue;
      }
      ids[i] = (int) (long) merge;
      ids[j] = -1;
      next[i] = next[j];
      if (next[j] >= 0) {
        prev[next[j]] = i;
      }
      alive--;
      if (prev[i] >= 0) {
        pushCandidate(heap, ids, next, prev[i]);
      }
      pushCandidate(heap, ids, next, i);
    }
    int[] out = new int[alive];
    int k = 0;
    for (int i = 0; i >= 0; i = next[i]) {
      out[k++] = ids[i];
    }
    return out;
  }

  private void pushCandidate(PriorityQueue<Long> heap, int[] ids, int[] next, int i) {
    int j = next[i];
    if (j < 0) {
      return;
    }
    Long merge = merges.get(pairKey(ids[i], ids[j]));
    if (merge != null) {
      heap.add((merge >>> 32) << 32 | i);
    }
  }

  @Override
  public String decode(int[] ids) {
    return Utf8.decode(bytesOf(ids));
  }

  /** The concatenated raw bytes of the tokens. */
  public byte[] bytesOf(int[] ids) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(ids.length * 4);
    for (int id : ids) {
      out.writeBytes(bytesOf(id));
    }
    return out.toByteArray();
  }

  @Override
  public boolean isSpecial(int id) {
    return id < 0 || id >= tokenBytes.length || tokenBytes[id] == null
        || specials.containsValue(id);
  }

  @Override
  public byte[] tokenBytes(int id) {
    return bytesOf(id).clone();
  }

  private byte[] bytesOf(int id) {
    if (id < 0 || id >= tokenBytes.length || tokenBytes[id] == null) {
      throw new IllegalArgumentException(
          "token id " + id + " is not in the vocabulary of " + tokenBytes.length);
    }
    return tokenBytes[id];
  }

  @Override
  public int eosTokenId() {
    return eosTokenId;
  }

  @Override
  public int vocabSize() {
    return tokenBytes.length;
  }

  private static long pairKey(int left, int right) {
    return ((long) left << 32) | (right & 0xffffffffL);
  }

  static String latin1(byte[] bytes) {
    return new String(bytes, StandardCharsets.ISO_8859_1);
  }

  private static Pattern specialPattern(Map<String, Integer> specials) {
    // Longest first so that a special token that prefixes another never wins over it.
    StringBuilder alt = new StringBuilder();
    specials.keySet().stream()
        .sorted((a, b) -> b.length() != a.length() ? b.length() - a.length() : a.compareTo(b))
        .forEach(s -> alt.append(alt.isEmpty() ? "" : "|").append(Pattern.quote(s)));
    return Pattern.compile(alt.toString());
  }
}
