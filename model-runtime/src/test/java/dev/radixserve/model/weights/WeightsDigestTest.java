package dev.radixserve.model.weights;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import dev.radixserve.model.ModelConfig;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link WeightsDigest}: the same bytes give the same digest; other weights another. */
class WeightsDigestTest {

  @TempDir
  Path dir;

  private Path write(String name, long seed) {
    try (GptWeights w = RandomGpt2.create(ModelConfig.embeddedDefault(), seed)) {
      HfModelWriter.write(w, dir.resolve(name), DType.F32);
    }
    return dir.resolve(name).resolve(HfModelLoader.SAFETENSORS);
  }

  @Test
  void aCopyHasTheSameDigestOtherWeightsAnother() throws IOException {
    Path a = write("a", 1);
    Path copy = dir.resolve("copy").resolve(HfModelLoader.SAFETENSORS);
    Files.createDirectories(copy.getParent());
    Files.copy(a, copy);
    Path b = write("b", 2);
    String digest = WeightsDigest.of(List.of(a));
    assertEquals(16, digest.length());
    assertEquals(digest, WeightsDigest.of(List.of(copy)));
    assertNotEquals(digest, WeightsDigest.of(List.of(b)));
  }

  @Test
  void aChangedSampledPageChangesTheDigest() throws IOException {
    Path a = write("a", 1);
    String before = WeightsDigest.of(List.of(a));
    try (RandomAccessFile f = new RandomAccessFile(a.toFile(), "rw")) {
      f.seek(f.length() - 1); // the last page is always sampled
      int b = f.read();
      f.seek(f.length() - 1);
      f.write(b ^ 1);
    }
    assertNotEquals(before, WeightsDigest.of(List.of(a)));
  }

  /**
   * A GGUF file starts with its magic and version, not a header length: it is digested by its
   * first bytes and sampled pages, never read whole (a sparse 3 GiB file here; read whole it
   * would not even fit a Java array), and its metadata and its data both count.
   */
  @Test
  void aGgufFileIsDigestedByItsHeadAndSamplesNotReadWhole() throws IOException {
    Path gguf = dir.resolve("model.gguf");
    try (RandomAccessFile f = new RandomAccessFile(gguf.toFile(), "rw")) {
      f.write(new byte[] {'G', 'G', 'U', 'F', 3, 0, 0, 0});
      f.write("general.architecture llama".getBytes(java.nio.charset.StandardCharsets.UTF_8));
      f.setLength(3L << 30);
      f.seek(f.length() - 1);
      f.write(7);
    }
    String digest = WeightsDigest.of(List.of(gguf));
    try (RandomAccessFile f = new RandomAccessFile(gguf.toFile(), "rw")) {
      f.seek(8);
      f.write('G'); // the metadata
    }
    String metadataChanged = WeightsDigest.of(List.of(gguf));
    assertNotEquals(digest, metadataChanged);
    try (RandomAccessFile f = new RandomAccessFile(gguf.toFile(), "rw")) {
      f.seek(f.length() - 1);
      f.write(8); // the last sampled page
    }
    assertNotEquals(metadataChanged, WeightsDigest.of(List.of(gguf)));
  }
}
