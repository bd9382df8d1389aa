package dev.radixserve.server.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class DescriptorLimitTest {

  @Test
  void connectionsFitBelowTheLimitWithWhatIsOpenAndTheReserve() {
    assertEquals(2048, DescriptorLimit.capFor(2048, 1_048_576, 120));
    assertEquals(300 - 100 - DescriptorLimit.RESERVE, DescriptorLimit.capFor(2048, 300, 100));
    assertEquals(1, DescriptorLimit.capFor(2048, 100, 90), "at least one connection");
  }
}
