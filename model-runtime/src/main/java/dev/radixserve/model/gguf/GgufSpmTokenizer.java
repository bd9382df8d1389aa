package dev.radixserve.model.gguf;

import dev.radixserve.model.Tokenizer;
import dev.radixserve.model.weights.ModelLoadException;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;

/**
 * A {@code tokenizer.ggml.model llama} vocabulary (SentencePiece BPE with byte fallback, as
 * llama.cpp's converter copies it from {@code tokenizer.model}: pieces, scores, types), tokenized
 * as llama.cpp's {@code llm_tokenizer_spm_session} does, line for line:
 *
 * <ul>
 *   <li>the text is split on control, user-defined and unknown tokens ({@code
 *       tokenizer_st_partition}, longest first); those become their ids, and the whitespace
 *       after those llama.cpp marks {@code rstrip} ({@link GgufTokenizer#rstrip}) is dropped;
 *   <li>each other fragment gets a leading space when it is first or follows a special token
 *       ({@code add_space_prefix}), spaces become {@code ▁}, and it is split into UTF-8
 *       characters;
 *   <li>adjacent symbols whose concatenation is a piece are merged, highest score first (ties:
 *       leftmost), until none is;
 *   <li>a symbol that is no piece is re-split along the merges that made it, down to pieces or
 *       bytes ({@code <0xNN>}, else the one-byte piece).
 * </ul>
 *
 * BOS is put first under {@code add_bos_token} (llama.cpp's SPM default: true), EOS last under
 * {@code add_eos_token}. Strings are compared as their UTF-8 bytes (held as ISO-8859-1 strings, one
 * char per byte), as llama.cpp compares std::strings.
 */
final class GgufSpmTokenizer implements Tokenizer {

  private static final int CONTROL = 3;
  private static final int UNKNOWN = 2;
  private static final int USER_DEFINED = 4;
  private static final int BYTE = 6;
  private static final String SPACE = "\u2581";
  /** unicode_len_utf8: a UTF-8 sequence's length by its first byte's high nibble. */
  private static final int[] UTF8_LEN = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};

  private final String[] pieces; // UTF-8 bytes as ISO-8859-1
  private final float[] scores;
  private final int[] types;
  private final Map<String, Integer> ids = new HashMap<>();
  private final List<Integer> specials = new ArrayList<>();
  private final BitSet special = new BitSet();
  /** Special tokens whose following whitespace is dropped ({@link GgufTokenizer#rstrip}). */
  private final BitSet rstrip = new BitSet();
  private final byte[][] bytes;
  private final int bos;
  private final int eos;
  private final boolean addBos;
  private final boolean addEos;
  private final boolean addSpacePrefix;

  GgufSpmTokenizer(GgufFile f) {
    List<?> tokens = list(f, GgufKeys.TOKENS);
    List<?> s = list(f, GgufKeys.SCORES);
    List<?> t = list(f, GgufKeys.TOKEN_TYPE);
    if (s.size() != tokens.size() || t.size() != tokens.size()) {
      throw new ModelLoadException(f.primary(), tokens.size() + " tokens, " + s.size()
          + " scores, " + t.size() + " types");
    }
    int n = tokens.size();
    java.util.function.Predicate<String> rstripped = GgufTokenizer.rstrip(f);
    pieces = new String[n];
    scores = new float[n];
    types = new int[n];
    bytes = new byte[n][];
    for (int id = 0; id < n; id++) {
      String text = tokens.get(id).toString();
      byte[] utf8 = text.getBytes(StandardCharsets.UTF_8);
      pieces[id] = new String(utf8, StandardCharsets.ISO_8859_1);
      scores[id] = ((Number) s.get(id)).floatValue();
      types[id] = ((Number) t.get(id)).intValue();
      ids.put(pieces[id], id);
      if (types[id] == CONTROL || types[id] == USER_DEFINED || types[id] == UNKNOWN) {
        specials.add(id);
        rstrip.set(id, rstripped.test(text));
      }
      if (types[id] == CONTROL || types[id] == UNKNOWN) {
        special.set(id);
      }
      bytes[id] = types[id] == BYTE && text.matches("<0x[0-9A-Fa-f]{2}>")
          ? new byte[] {(byte) Integer.parseInt(text.substring(3, 5), 16)}
          : types[id] == CONTROL ? new byte[0]
          : text.replace(SPACE, " ").getBytes(StandardCharsets.UTF_8);
    }
    specials.sort(Comparator.comparingInt((Integer id) -> pieces[id].length()).reversed());
    bos = f.get(GgufKeys.BOS_ID) instanceof Number b ? b.intValue() : -1;
    eos = f.get(GgufKeys.EOS_ID) instanceof Number e ? e.intValue() : -1;
    addBos = f.get(GgufKeys.ADD_BOS) instanceof Boolean b ? b : true;
    addEos = f.get(GgufKeys.ADD_EOS) instanceof Boolean b && b;
    addSpacePrefix = f.get(GgufKeys.ADD_SPACE_PREFIX) instanceof Boolean b ? b : true;
    if (addBos && (bos < 0 || bos >= n) || addEos && (eos < 0 || eos >= n)) {
      throw new ModelLoadException(f.primary(), "add_bos_token/add_eos_token without a valid"
          + " bos/eos id (" + bos + ", " + eos + ")");
    }
  }

  @Override
  public int[] encode(String text) {
    return tokenize(text, true);
  }

  @Override
  public int[] encodeTemplated(String text) {
    return tokenize(text, false);
  }

  /** llama.cpp's {@code tokenize_impl} for SPM, parse_special on. */
  int[] tokenize(String text, boolean addSpecial) {
    List<Integer> out = new ArrayList<>();
    if (addSpecial && addBos) {
      out.add(bos);
    }
    boolean prevSpecial = true;
    for (Object fragment : partition(new String(text.getBytes(StandardCharsets.UTF_8),
        StandardCharsets.ISO_8859_1))) {
      if (fragment instanceof Integer id) {
        out.add(id);
        prevSpecial = true;
      } else {
        String raw = (addSpacePrefix && prevSpecial ? " " : "") + fragment;
        session(raw.replace(" ", new String(SPACE.getBytes(StandardCharsets.UTF_8),
            StandardCharsets.ISO_8859_1)), out);
        prevSpecial = false;
      }
    }
    if (addSpecial && addEos) {
      out.add(eos);
    }
    return out.stream().mapToInt(Integer::intValue).toArray();
  }

  /** {@code tokenizer_st_partition}: raw text (String) and special-token ids (Integer). */
  private List<Object> partition(String text) {
    List<Object> fragments = new ArrayList<>();
    if (!text.isEmpty()) {
      fragments.add(text);
    }
    for (int id : specials) {
      String piece = pieces[id];
      if (piece.isEmpty()) {
        continue;
      }
      List<Object> next = new ArrayList<>();
      for (Object f : fragments) {
        if (!(f instanceof String raw)) {
          next.add(f);
          continue;
        }
        int from = 0;
        for (int at = raw.indexOf(piece); at >= 0; at = raw.indexOf(piece, from)) {
          if (at > from) {
            next.add(raw.substring(from, at));
          }
          next.add(id);
          from = at + piece.length();
          while (rstrip.get(id) && from < raw.length() && isSpace(raw.charAt(from))) {
            from++;
          }
        }
        if (from < raw.length()) {
          next.add(raw.substring(from));
        }
      }
      fragments = next;
    }
    return fragments;
  }

  /** C's {@code isspace} in the "C" locale, which llama.cpp's partition strips with. */
  private static boolean isSpace(char c) {
    return c == ' ' || c >= '\t' && c <= '\r';
  }

  /** One symbol: a byte range of the text, linked to its neighbours. */
  private static final class Symbol {
    int start;
    int n;
    int prev;
    int next;
  }

  private record Bigram(int left, int right, float score, int size) {}

  /** {@code llm_tokenizer_spm_session::tokenize}. */
  private void session(String text, List<Integer> out) {
    List<Symbol> symbols = new ArrayList<>();
    int offs = 0;
    while (offs < text.length()) {
      Symbol sym = new Symbol();
      sym.start = offs;
      sym.n = Math.min(UTF8_LEN[(text.charAt(offs) & 0xff) >>> 4], text.length() - offs);
      offs += sym.n;
      sym.prev = symbols.size() - 1;
      sym.next = offs == text.length() ? -1 : symbols.size() + 1;
      symbols.add(sym);
    }
    // max score first; on a tie the leftmost (llm_bigram_spm::comparator)
    PriorityQueue<Bigram> queue = new PriorityQueue<>((a, b) -> a.score() != b.score()
        ? Float.compare(b.score(), a.score()) : Integer.compare(a.left(), b.left()));
    Map<String, int[]> revMerge = new HashMap<>();
    for (int i = 1; i < symbols.size(); i++) {
      tryAddBigram(text, symbols, i - 1, i, queue, revMerge);
    }
    while (!queue.isEmpty()) {
      Bigram bigram = queue.poll();
      Symbol left = symbols.get(bigram.left());
      Symbol right = symbols.get(bigram.right());
      if (left.n == 0 || right.n == 0 || left.n + right.n != bigram.size()) {
        continue;
      }
      left.n += right.n;
      right.n = 0;
      left.next = right.next;
      if (right.next >= 0) {
        symbols.get(right.next).prev = bigram.left();
      }
      tryAddBigram(text, symbols, left.prev, bigram.left(), queue, revMerge);
      tryAddBigram(text, symbols, bigram.left(), left.next, queue, revMerge);
    }
    for (int i = symbols.isEmpty() ? -1 : 0; i != -1; i = symbols.get(i).next) {
      resegment(text, symbols, symbols.get(i), revMerge, out);
    }
  }

  private void tryAddBigram(String text, List<Symbol> symbols, int left, int right,
      PriorityQueue<Bigram> queue, Map<String, int[]> revMerge) {
    if (left == -1 || right == -1) {
      return;
    }
    Symbol l = symbols.get(left);
    String joined = text.substring(l.start, l.start + l.n + symbols.get(right).n);
    Integer id = ids.get(joined);
    if (id == null) {
      return;
    }
    queue.add(new Bigram(left, right, scores[id], joined.length()));
    revMerge.put(joined, new int[] {left, right});
  }

  private void resegment(String text, List<Symbol> symbols, Symbol symbol,
      Map<String, int[]> revMerge, List<Integer> out) {
    String piece = text.substring(symbol.start, symbol.start + symbol.n);
    Integer id = ids.get(piece);
    if (id != null) {
      out.add(id);
      return;
    }
    int[] merge = revMerge.get(piece);
    if (merge == null) {
      for (int j = 0; j < piece.length(); j++) {
        out.add(byteToken(piece.charAt(j) & 0xff));
      }
      return;
    }
    resegment(text, symbols, symbols.get(merge[0]), revMerge, out);
    resegment(text, symbols, symbols.get(merge[1]), revMerge, out);
  }

  /** {@code byte_to_token}: {@code <0xNN>}, else the one-byte piece. */
  private int byteToken(int b) {
    Integer id = ids.get(String.format("<0x%02X>", b));
    if (id == null) {
      id = ids.get(String.valueOf((char) b));
    }
    if (id == null) {
      throw new IllegalStateException("the vocabulary has no token for byte " + b);
    }
    return id;
  }

  @Override
  public String decode(int[] ids) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (int id : ids) {
      out.writeBytes(tokenBytes(id));
    }
    return out.toString(StandardCharsets.UTF_8);
  }

  @Override
  public byte[] tokenBytes(int id) {
    return bytes[id].clone();
  }

  @Override
  public boolean isSpecial(int id) {
    return id < 0 || id >= bytes.length || special.get(id);
  }

  @Override
  public int eosTokenId() {
    if (eos < 0) {
      throw new IllegalStateException("the file names no tokenizer.ggml.eos_token_id");
    }
    return eos;
  }

  @Override
  public int vocabSize() {
    return pieces.length;
  }

  private static List<?> list(GgufFile f, String key) {
    if (!(f.get(key) instanceof List<?> l)) {
      throw new ModelLoadException(f.primary(), "metadata " + key + " is missing");
    }
    return l;
  }
}
