package dev.radixserve.model.tokenizer;

import com.knuddels.jtokkit.Encodings;
import com.knuddels.jtokkit.api.Encoding;
import com.knuddels.jtokkit.api.EncodingType;
import com.knuddels.jtokkit.api.IntArrayList;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/** JTokkit's r50k_base, an independent implementation of GPT-2's encoding, and test inputs. */
final class Gpt2Reference {

  static final Encoding R50K = Encodings.newDefaultEncodingRegistry().getEncoding(EncodingType.R50K_BASE);

  private Gpt2Reference() {}

  /** GPT-2's ids for text, {@code <|endoftext|>} as the special token. */
  static int[] encode(String text) {
    List<Integer> ids = new ArrayList<>();
    String[] parts = text.split("<\\|endoftext\\|>", -1);
    for (int i = 0; i < parts.length; i++) {
      if (i > 0) {
        ids.add(50256);
      }
      IntArrayList ordinary = R50K.encodeOrdinary(parts[i]);
      for (int j = 0; j < ordinary.size(); j++) {
        ids.add(ordinary.get(j));
      }
    }
    return ids.stream().mapToInt(Integer::intValue).toArray();
  }

  static final List<String> TRICKY = List.of(
      "",
      "Hello world",
      "Hello, world! How are you today?",
      "  leading spaces",
      "trailing spaces   ",
      " ",
      "   ",
      "\n",
      "\n\n\n",
      "a\n\nb\n \n c",
      "tabs\tand\t\ttabs \t mixed",
      "I'M here, I'm here, don't DON'T we'll WE'LL they've it's IT'S you'd",
      "'s't're've'm'll'd",
      "numbers 12345 3.14 -0.5 1,000,000 2024-11-21 0x1F",
      "１２３ Ⅻ ½ ٣ digits",
      "日本語のテキスト、漢字とかな。中文文本。한국어 텍스트",
      "combining: e\u0301 a\u0308 n\u0303 Z\u0351\u0352\u0357\u035b\u0346\u0315\u031a",
      "emoji 😀 👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈 ❤️ 🇫🇷",
      "mixed Ελληνικά русский עברית العربية हिन्दी ไทย",
      "def f(x):\n    return x ** 2  # square\n\tpass\n",
      "for (int i = 0; i < n; i++) { a[i] += b[i] >> 2; }",
      "<html><body class=\"x\">&nbsp;&amp;</body></html>",
      "text<|endoftext|>more text",
      "<|endoftext|>",
      "<|endoftext|><|endoftext|> x <|endoftext",
      "nbsp\u00a0here and\u3000ideographic space and\u2003em space",
      "line\r\nwindows\rmac",
      "!!!??? ... --- *** ~~~ ``` ''' \"\"\"",
      "supercalifragilisticexpialidocious antidisestablishmentarianism",
      "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
      "ðŁĺĢ Ġ Ċ byte-level lookalikes",
      "\u0000 control \u0001\u001f chars \u007f");

  /** Random strings over a mix of scripts, spaces, digits, punctuation, emoji and the special token. */
  static List<String> randomStrings(long seed, int count) {
    String[] atoms = {
      "a", "Z", "é", "ß", "日", "本", "한", "ж", "ع", " ", "  ", "\n", "\t", "\r\n", "'", "'s", "'LL",
      "1", "23", "٣", ".", ",", "!", "?", "-", "_", "(", ")", "{", "\"", "😀", "👍🏽", "‍", "\u0301",
      "\u00a0", "<|endoftext|>", "<|", "|>", "http://x.y/z?q=1", "the", " the", "The", "ing", "tion"
    };
    SplittableRandom random = new SplittableRandom(seed);
    List<String> out = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      StringBuilder sb = new StringBuilder();
      int n = random.nextInt(1, 30);
      for (int j = 0; j < n; j++) {
        sb.append(atoms[random.nextInt(atoms.length)]);
      }
      out.add(sb.toString());
    }
    return out;
  }
}
