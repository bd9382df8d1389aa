package dev.radixserve.model.constraint;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dk.brics.automaton.Automaton;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Character ranges to UTF-8 byte automata, against the JDK's encoder for every BMP character. */
class Utf8AutomataTest {

  @Test
  void byteAutomatonAcceptsExactlyTheEncodingsOfTheRange() {
    SplittableRandom rnd = new SplittableRandom(26);
    int[][] ranges = {{0, 0xFFFF}, {0x7F, 0x80}, {0x7FF, 0x800}, {0x3A, 0x2000}, {0xD000, 0xE100},
        {rnd.nextInt(0x10000), 0}, {rnd.nextInt(0x800), 0}};
    ranges[5][1] = Math.min(0xFFFF, ranges[5][0] + rnd.nextInt(5000));
    ranges[6][1] = ranges[6][0] + rnd.nextInt(3000);
    for (int[] r : ranges) {
      Automaton bytes = Utf8Automata.toBytes(Automaton.makeCharRange((char) r[0], (char) r[1]));
      for (int cp = 0; cp <= 0xFFFF; cp++) {
        if (Character.isSurrogate((char) cp)) {
          continue;
        }
        boolean in = cp >= r[0] && cp <= r[1];
        assertEquals(in, SchemaCompilerTest.accepts(bytes, Character.toString(cp)),
            String.format("U+%04X in [%04X, %04X]", cp, r[0], r[1]));
      }
    }
  }

  @Test
  void supplementaryCharactersAndNoPartialOrOverlongForms() {
    Automaton a = Utf8Automata.supplementary();
    assertEquals(true, SchemaCompilerTest.accepts(a, "\ud83d\ude00"));
    assertEquals(true, SchemaCompilerTest.accepts(a, new String(Character.toChars(0x10FFFF))));
    byte[] smile = "\ud83d\ude00".getBytes(StandardCharsets.UTF_8);
    StringBuilder partial = new StringBuilder();
    for (int i = 0; i < 3; i++) {
      partial.append((char) (smile[i] & 0xFF));
    }
    assertEquals(false, a.run(partial.toString()));
    assertEquals(false, a.run("\u00F0\u0080\u0080\u0080"), "overlong 4-byte NUL");
    assertEquals(false, a.run("\u00F4\u0090\u0080\u0080"), "past U+10FFFF");
  }
}
