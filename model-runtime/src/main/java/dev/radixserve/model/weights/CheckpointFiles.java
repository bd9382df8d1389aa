package dev.radixserve.model.weights;

import com.fasterxml.jackson.databind.JsonNode;
import java.lang.foreign.Arena;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The safetensors files of a checkpoint, memory-mapped: {@code model.safetensors}, or else the
 * shards that {@code model.safetensors.index.json} names (Hugging Face's order of preference).
 *
 * <pre>
 *   model.safetensors.index.json   {"metadata": {...}, "weight_map": {tensor name: shard file}}
 *   model-00001-of-00003.safetensors, ...   each a plain safetensors file
 * </pre>
 *
 * Every tensor of every shard is read (as Hugging Face does); the index must name files inside
 * the directory, and every tensor it lists must be in the shard it names.
 *
 * @param files the files read, in index order
 * @param tensors every tensor by its stored name
 * @param fileOf the file each tensor came from (for error messages)
 */
record CheckpointFiles(List<Path> files, Map<String, Tensor> tensors, Map<String, Path> fileOf) {

  static final String SAFETENSORS = "model.safetensors";
  static final String INDEX = "model.safetensors.index.json";

  /** Maps the checkpoint's files into {@code arena} (they stay mapped while it is open). */
  static CheckpointFiles map(Path dir, Arena arena) {
    Path single = dir.resolve(SAFETENSORS);
    Path index = dir.resolve(INDEX);
    List<Path> files;
    Map<String, Path> listed = new LinkedHashMap<>();
    if (Files.isRegularFile(single) || !Files.isRegularFile(index)) {
      if (!Files.isRegularFile(single)) {
        throw new ModelLoadException(single, "file is missing (and there is no " + INDEX + ")"
            + (Files.exists(dir.resolve("pytorch_model.bin")) ? "; pytorch_model.bin (a PyTorch"
                + " pickle) is not read: convert it to safetensors" : ""));
      }
      files = List.of(single);
    } else {
      files = shards(dir, index, listed);
    }
    Map<String, Tensor> tensors = new LinkedHashMap<>();
    Map<String, Path> fileOf = new LinkedHashMap<>();
    for (Path file : files) {
      for (Tensor t : SafetensorsFile.map(file, arena).values()) {
        Path earlier = fileOf.putIfAbsent(t.name(), file);
        if (earlier != null) {
          throw new ModelLoadException(file, "tensor " + t.name() + " is also in "
              + earlier.getFileName());
        }
        tensors.put(t.name(), t);
      }
    }
    listed.forEach((name, file) -> {
      if (!file.equals(fileOf.get(name))) {
        throw new ModelLoadException(file, "does not hold tensor " + name + ", which " + INDEX
            + " places there");
      }
    });
    return new CheckpointFiles(files, tensors, fileOf);
  }

  /** The shard files of the index in first-mention order; fills {@code listed} (name → file). */
  private static List<Path> shards(Path dir, Path index, Map<String, Path> listed) {
    JsonNode weightMap = JsonFile.readObject(index).get("weight_map");
    if (weightMap == null || !weightMap.isObject() || weightMap.isEmpty()) {
      throw new ModelLoadException(index, "has no weight_map object of tensor name to file");
    }
    Path base = dir.toAbsolutePath().normalize();
    Set<Path> files = new LinkedHashSet<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = weightMap.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      String name = e.getValue().asText("");
      Path file = base.resolve(name).normalize();
      if (!e.getValue().isTextual() || name.isEmpty() || !base.equals(file.getParent())) {
        throw new ModelLoadException(index, "weight_map maps " + e.getKey() + " to " + e.getValue()
            + ", not a file name in the model directory");
      }
      if (!Files.isRegularFile(file)) {
        throw new ModelLoadException(file, "file is missing (" + INDEX + " names it for "
            + e.getKey() + ")");
      }
      files.add(file);
      listed.put(e.getKey(), file);
    }
    return new ArrayList<>(files);
  }
}
