package dev.radixserve.model;

/** Text to token ids and back (GPT-2 byte-level BPE). Thread-safe: HTTP threads tokenize. */
public interface Tokenizer {

  /** Encodes text; the special token {@code <|endoftext|>} in the text maps to its id. */
  int[] encode(String text);

  /** Decodes ids to text; bytes that do not form valid UTF-8 become U+FFFD. */
  String decode(int[] ids);

  /** The raw bytes of one token (byte-level BPE tokens are byte strings, not always UTF-8). */
  byte[] tokenBytes(int id);

  /** {@code <|endoftext|>}: 50256 for GPT-2. */
  int eosTokenId();

  int vocabSize();
}
