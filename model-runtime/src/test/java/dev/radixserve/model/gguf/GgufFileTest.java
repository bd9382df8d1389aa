package dev.radixserve.model.gguf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.radixserve.model.weights.ModelLoadException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The reader on files gguf-py and llama.cpp's converter wrote ({@code gguf/make_fixtures.py}). */
class GgufFileTest {

  @TempDir Path tmp;

  /** Every value type, an alignment of 64, and two tensors, as gguf-py's GGUFReader reads them. */
  @Test
  void readsEveryValueTypeAndTheAlignmentAsGgufPyDoes() throws IOException {
    JsonNode expected = new ObjectMapper().readTree(
        GgufTestFiles.fixtures().resolve("value-types.json").toFile());
    try (Arena arena = Arena.ofConfined()) {
      GgufFile f = GgufFile.map(GgufTestFiles.fixtures().resolve("value-types.gguf"), arena);
      assertEquals(expected.get("fields").size(), f.metadata().size());
      expected.get("fields").fields().forEachRemaining(e -> {
        Object got = f.get(e.getKey());
        JsonNode want = e.getValue().get("value");
        switch (e.getValue().get("type").asText()) {
          case "FLOAT32", "FLOAT64" -> assertEquals(want.asDouble(), (Double) got, 0.0, e.getKey());
          case "BOOL" -> assertEquals(want.asBoolean(), got, e.getKey());
          case "STRING" -> assertEquals(want.asText(), got, e.getKey());
          case "UINT64" -> assertEquals(want.bigIntegerValue().longValue(), got, e.getKey());
          case "ARRAY" -> {
            List<?> list = (List<?>) got;
            assertEquals(want.size(), list.size(), e.getKey());
            for (int i = 0; i < list.size(); i++) {
              Object item = list.get(i);
              if (item instanceof Double d) {
                assertEquals(want.get(i).asDouble(), d, 0.0, e.getKey());
              } else if (item instanceof Long l) {
                assertEquals(want.get(i).asLong(), l, e.getKey());
              } else {
                assertEquals(want.get(i).asText(), item, e.getKey());
              }
            }
          }
          default -> assertEquals(want.asLong(), got, e.getKey());
        }
      });
      assertEquals(64L, f.get("general.alignment"));
      JsonNode tensors = expected.get("tensors");
      assertEquals(tensors.size(), f.tensors().size());
      for (int i = 0; i < tensors.size(); i++) {
        GgufFile.TensorInfo t = f.tensors().get(i);
        JsonNode w = tensors.get(i);
        assertEquals(w.get("name").asText(), t.name());
        assertEquals(w.get("type").asText(), t.type().name());
        assertEquals(w.get("n_bytes").asLong(), t.data().byteSize());
        assertEquals(0, t.data().address() % 64, "aligned to general.alignment");
        // gguf-py's data_offset is the tensor's place in the file
        long fileStart = f.tensors().getFirst().data().address()
            - tensors.get(0).get("offset").asLong();
        assertEquals(w.get("offset").asLong(), t.data().address() - fileStart, t.name());
      }
      assertArrayEquals(new long[] {5, 3}, f.tensors().getFirst().ne());
      assertArrayEquals(new long[] {3, 5}, f.tensors().getFirst().shape());
    }
  }

  /** The converter's --split-max-tensors shards hold the single file's tensors, byte for byte. */
  @Test
  void shardsJoinIntoTheSingleFilesTensors() {
    try (Arena arena = Arena.ofConfined()) {
      GgufFile whole = GgufFile.map(GgufTestFiles.fixtures().resolve("llama3-f32.gguf"), arena);
      GgufFile split = GgufFile.map(
          GgufTestFiles.fixtures().resolve("llama3-split-00001-of-00003.gguf"), arena);
      assertEquals(3, split.files().size());
      assertEquals(whole.tensors().size(), split.tensors().size());
      for (GgufFile.TensorInfo t : whole.tensors()) {
        GgufFile.TensorInfo s = split.tensors().stream()
            .filter(x -> x.name().equals(t.name())).findFirst().orElseThrow();
        assertEquals(t.type(), s.type());
        assertArrayEquals(t.ne(), s.ne());
        assertEquals(-1, t.data().mismatch(s.data()), t.name());
      }
      assertEquals(whole.get(GgufKeys.TOKENS), split.get(GgufKeys.TOKENS));
      ModelLoadException second = assertThrows(ModelLoadException.class, () -> GgufFile.map(
          GgufTestFiles.fixtures().resolve("llama3-split-00002-of-00003.gguf"), arena));
      assertTrue(second.getMessage().contains("give the first, llama3-split-00001-of-00003.gguf"),
          second.getMessage());
    }
  }

  @Test
  void aMissingShardATruncatedFileAndAnotherFormatAreRefusedByName() throws IOException {
    Path first = tmp.resolve("m-00001-of-00002.gguf");
    Files.copy(GgufTestFiles.fixtures().resolve("llama3-split-00001-of-00003.gguf"), first);
    try (Arena arena = Arena.ofConfined()) {
      ModelLoadException missing = assertThrows(ModelLoadException.class,
          () -> GgufFile.map(first, arena));
      assertTrue(missing.getMessage().contains("shard m-00002-of-00002.gguf of 2 is missing"),
          missing.getMessage());
      byte[] whole = Files.readAllBytes(GgufTestFiles.fixtures().resolve("llama3-q4_0.gguf"));
      Path cut = tmp.resolve("cut.gguf");
      Files.write(cut, java.util.Arrays.copyOf(whole, whole.length - 100));
      ModelLoadException truncated = assertThrows(ModelLoadException.class,
          () -> GgufFile.map(cut, arena));
      assertTrue(truncated.getMessage().contains("runs past the end of the file"),
          truncated.getMessage());
      Path st = tmp.resolve("model.gguf");
      Files.write(st, new byte[64]);
      ModelLoadException notGguf = assertThrows(ModelLoadException.class,
          () -> GgufFile.map(st, arena));
      assertTrue(notGguf.getMessage().contains("is not a GGUF file"), notGguf.getMessage());
    }
  }

  /** Another file under the same name (other metadata, or only a new mtime) has another identity. */
  @Test
  void theIdentityChangesWithTheHeaderAndTheModificationTime() throws IOException {
    Path a = tmp.resolve("model.gguf");
    Files.copy(GgufTestFiles.fixtures().resolve("qwen2-q8_0.gguf"), a);
    Files.setLastModifiedTime(a, FileTime.fromMillis(1_700_000_000_000L));
    String before = GgufModelLoader.identity(a);
    assertEquals(before, GgufModelLoader.identity(a), "stable");
    Files.setLastModifiedTime(a, FileTime.fromMillis(1_700_000_001_000L));
    String touched = GgufModelLoader.identity(a);
    assertNotEquals(before, touched);
    Path b = tmp.resolve("b.gguf");
    GgufTestFiles.rewrite("qwen2-q8_0.gguf", b, kv -> kv.put(GgufKeys.NAME, "another"), t -> { });
    Files.move(b, a, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    Files.setLastModifiedTime(a, FileTime.fromMillis(1_700_000_001_000L));
    assertNotEquals(touched, GgufModelLoader.identity(a));
    assertTrue(before.matches("\\d+@1700000000000;[0-9a-f]{16}"), before);
  }
}
