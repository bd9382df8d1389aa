package dev.radixserve.server.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The checked-in configuration reference is the one the command definitions render: a flag
 * added, renamed or re-described without the page fails here. With
 * {@code -Dradixserve.writeDocs=true} the test writes the page instead (then commit it).
 */
class ConfigurationReferenceTest {

  private static final Path PAGE = Path.of("..").resolve(ConfigurationReference.PAGE);

  @Test
  void checkedInPageIsTheGeneratedOne() throws Exception {
    String generated = ConfigurationReference.render();
    if (Boolean.getBoolean("radixserve.writeDocs")) {
      Files.writeString(PAGE, generated, StandardCharsets.UTF_8);
    }
    assertEquals(generated, Files.readString(PAGE, StandardCharsets.UTF_8),
        PAGE + " differs from what the command definitions render; regenerate it with -Dtest="
            + "ConfigurationReferenceTest -Dradixserve.writeDocs=true (see ConfigurationReference)");
  }
}
