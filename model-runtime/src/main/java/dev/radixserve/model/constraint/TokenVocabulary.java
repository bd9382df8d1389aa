package dev.radixserve.model.constraint;

import dev.radixserve.model.Tokenizer;
import java.util.Arrays;

/**
 * The tokenizer's text tokens as a byte trie, so that the tokens allowed in one automaton state
 * are found in one walk that shares every common prefix (GPT-2: 50,257 tokens, about 90,000
 * trie nodes) instead of one walk per token. Special tokens are left out: they are no text;
 * except those a tool-call syntax writes as its markers (Mistral's {@code [TOOL_CALLS]} is a
 * control token), which are kept as their text so a forced call can be written with them.
 *
 * <p>Layout (children of a node contiguous, nodes numbered breadth first):
 *
 * <pre>
 *   childStart[n] .. childStart[n + 1]   the edges out of node n
 *   edgeByte[e], edgeTarget[e]           edge e: its byte (0..255) and the node it leads to
 *   tokenAt[n]                           the token whose bytes end at node n, or -1
 * </pre>
 */
public final class TokenVocabulary {

  private final int vocabSize;
  private final byte[][] bytes; // (token) -> bytes; null for special tokens
  final int[] childStart;
  final int[] edgeByte;
  final int[] edgeTarget;
  final int[] tokenAt;

  public TokenVocabulary(Tokenizer tokenizer) {
    this(tokenizer, java.util.Set.of());
  }

  /** @param markers texts of special tokens to keep (as their text) */
  public TokenVocabulary(Tokenizer tokenizer, java.util.Set<String> markers) {
    this.vocabSize = tokenizer.vocabSize();
    this.bytes = new byte[vocabSize][];
    // build with per-node sorted child arrays, then lay out breadth first
    Builder b = new Builder();
    for (int id = 0; id < vocabSize; id++) {
      if (tokenizer.isSpecial(id) && (markers.isEmpty()
          || !markers.contains(new String(tokenizer.tokenBytes(id),
              java.nio.charset.StandardCharsets.UTF_8)))) {
        continue;
      }
      byte[] t = tokenizer.tokenBytes(id);
      if (t.length == 0) {
        continue;
      }
      bytes[id] = t;
      b.insert(t, id);
    }
    int n = b.size;
    childStart = new int[n + 1];
    edgeByte = new int[n - 1];
    edgeTarget = new int[n - 1];
    tokenAt = new int[n];
    int[] order = new int[n]; // new id -> builder id
    order[0] = 0;
    int head = 0;
    int tail = 1;
    int e = 0;
    while (head < tail) {
      int node = order[head];
      tokenAt[head] = b.token[node];
      childStart[head] = e;
      int[] keys = b.keys[node];
      for (int j = 0; keys != null && j < keys.length; j++) {
        edgeByte[e] = keys[j];
        edgeTarget[e] = tail; // the child's breadth-first number
        order[tail++] = b.kids[node][j];
        e++;
      }
      head++;
    }
    childStart[n] = e;
  }

  public int vocabSize() {
    return vocabSize;
  }

  /** The token's bytes; null for a special token. */
  byte[] bytes(int token) {
    return token >= 0 && token < vocabSize ? bytes[token] : null;
  }

  int nodes() {
    return tokenAt.length;
  }

  /** A growable trie with 256-way child maps kept as sorted small arrays. */
  private static final class Builder {
    int[][] keys = new int[1024][];
    int[][] kids = new int[1024][];
    int[] token = new int[1024];
    int size = 1;

    Builder() {
      Arrays.fill(token, -1);
    }

    int child(int node, int b) {
      int[] k = keys[node];
      if (k == null) {
        return -1;
      }
      int i = Arrays.binarySearch(k, b);
      return i >= 0 ? kids[node][i] : -1;
    }

    void insert(byte[] t, int id) {
      int node = 0;
      for (byte x : t) {
        int b = x & 0xFF;
        int c = child(node, b);
        if (c < 0) {
          c = add();
          int[] k = keys[node] == null ? new int[0] : keys[node];
          int[] v = kids[node] == null ? new int[0] : kids[node];
          int at = -Arrays.binarySearch(k, b) - 1;
          int[] nk = new int[k.length + 1];
          int[] nv = new int[k.length + 1];
          System.arraycopy(k, 0, nk, 0, at);
          System.arraycopy(v, 0, nv, 0, at);
          nk[at] = b;
          nv[at] = c;
          System.arraycopy(k, at, nk, at + 1, k.length - at);
          System.arraycopy(v, at, nv, at + 1, k.length - at);
          keys[node] = nk;
          kids[node] = nv;
        }
        node = c;
      }
      token[node] = id;
    }

    private int add() {
      if (size == token.length) {
        int cap = size * 2;
        keys = Arrays.copyOf(keys, cap);
        kids = Arrays.copyOf(kids, cap);
        token = Arrays.copyOf(token, cap);
        Arrays.fill(token, size, cap, -1);
      }
      return size++;
    }
  }
}
