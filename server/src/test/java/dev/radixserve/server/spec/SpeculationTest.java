package dev.radixserve.server.spec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;

import org.junit.jupiter.api.Test;

/** {@code --speculative auto} as each device runs it; a mode given explicitly is kept. */
class SpeculationTest {

  @Test
  void autoDraftsOnTheCpuAndNotOnCuda() {
    Speculation auto = new Speculation(SpeculativeMode.AUTO, 6, 3);
    assertEquals(new Speculation(SpeculativeMode.NGRAM, 6, 3), auto.on(false));
    assertEquals(new Speculation(SpeculativeMode.OFF, 6, 3), auto.on(true));
    // unresolved, it drafts nothing: an engine that was handed it by mistake decodes as off
    assertFalse(auto.enabled());
  }

  @Test
  void anExplicitModeIsKeptOnEveryDevice() {
    Speculation ngram = Speculation.ngram(8);
    Speculation off = Speculation.off();
    assertSame(ngram, ngram.on(true));
    assertSame(off, off.on(false));
  }
}
