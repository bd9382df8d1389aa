package dev.radixserve.server.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.model.Tokenizer;
import dev.radixserve.model.tokenizer.TokenizerLoader;
import java.util.List;
import org.junit.jupiter.api.Test;

class ChoiceTextTest {

  private static final Tokenizer TOKENIZER = TokenizerLoader.standard();

  @Test
  void stopStringAcrossTokensIsCutAndNeverStreamed() {
    int[] ids = TOKENIZER.encode("Hello world, END of story");
    ChoiceText text = new ChoiceText(TOKENIZER, new StopStrings(List.of(", END")));
    StringBuilder streamed = new StringBuilder();
    boolean stopped = false;
    for (int id : ids) {
      ChoiceText.Step step = text.add(id);
      streamed.append(step.delta());
      assertFalse(streamed.toString().contains(","), streamed.toString());
      if (step.stopped()) {
        stopped = true;
        break;
      }
    }
    assertTrue(stopped);
    assertEquals("Hello world", streamed.toString());
  }

  @Test
  void heldBackTextIsReleasedWhenItIsNotAStop() {
    ChoiceText text = new ChoiceText(TOKENIZER, new StopStrings(List.of("abcX")));
    StringBuilder streamed = new StringBuilder();
    for (int id : TOKENIZER.encode("xx abc abd")) {
      streamed.append(text.add(id).delta());
    }
    streamed.append(text.finish());
    assertEquals("xx abc abd", streamed.toString());
  }

  @Test
  void multiByteCharacterSplitAcrossTokensWaitsForItsLastByte() {
    int[] ids = TOKENIZER.encode("日本");
    ChoiceText text = new ChoiceText(TOKENIZER, new StopStrings(List.of()));
    StringBuilder streamed = new StringBuilder();
    for (int id : ids) {
      String delta = text.add(id).delta();
      assertFalse(delta.contains("\uFFFD"), delta);
      streamed.append(delta);
    }
    assertEquals("日本", streamed + text.finish());
  }

  /**
   * min_tokens: a stop string counts only when it lies wholly in the text of the tokens after
   * the first min_tokens.
   */
  @Test
  void stopStringsCountOnlyAfterMinTokens() {
    int[] ids = TOKENIZER.encode("a, END b, END c");
    String[] expected = new String[ids.length + 1];
    for (int min = 0; min <= ids.length; min++) {
      ChoiceText text = new ChoiceText(TOKENIZER, new StopStrings(List.of(", END")), min);
      StringBuilder streamed = new StringBuilder();
      boolean stopped = false;
      for (int id : ids) {
        ChoiceText.Step step = text.add(id);
        streamed.append(step.delta());
        if (step.stopped()) {
          stopped = true;
          break;
        }
      }
      if (!stopped) {
        streamed.append(text.finish());
      }
      expected[min] = streamed.toString();
    }
    int first = TOKENIZER.encode("a").length; // tokens before the first ", END"
    int second = TOKENIZER.encode("a, END b").length;
    assertEquals("a", expected[0]);
    assertEquals("a", expected[first]); // the first stop's tokens all come after the minimum
    assertEquals("a, END b", expected[first + 1]); // it starts inside the minimum: ignored
    assertEquals("a, END b", expected[second]);
    assertEquals("a, END b, END c", expected[second + 1]);
    assertEquals("a, END b, END c", expected[ids.length]);
  }
}
