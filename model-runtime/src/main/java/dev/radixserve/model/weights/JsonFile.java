package dev.radixserve.model.weights;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;

/** Reads the JSON files of a model directory; failures are {@link ModelLoadException}s naming the file. */
public final class JsonFile {

  private static final ObjectMapper JSON = new ObjectMapper();

  private JsonFile() {}

  /** The file's JSON value. */
  public static JsonNode read(Path file) {
    try {
      return JSON.readTree(file.toFile());
    } catch (JacksonException e) {
      throw new ModelLoadException(file, "is not valid JSON: " + e.getOriginalMessage(), e);
    } catch (IOException e) {
      throw new ModelLoadException(file, "cannot be read: " + e, e);
    }
  }

  /** The file's JSON object; anything else (an array, a number) is a load error. */
  public static JsonNode readObject(Path file) {
    JsonNode n = read(file);
    if (n == null || !n.isObject()) {
      throw new ModelLoadException(file, "is not a JSON object");
    }
    return n;
  }

  /** An empty JSON object (an optional file that is absent). */
  public static JsonNode emptyObject() {
    return JSON.createObjectNode();
  }
}
