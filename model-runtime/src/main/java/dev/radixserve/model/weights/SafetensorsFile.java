package dev.radixserve.model.weights;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Reads a safetensors file by memory-mapping it: an 8-byte little-endian header length, a JSON
 * header {name: {dtype, shape, data_offsets: [begin, end]}}, then the data. Each tensor is a slice
 * of the mapping, no copy. The mapping lives as long as the given arena.
 */
final class SafetensorsFile {

  private static final ObjectMapper JSON = new ObjectMapper();

  private SafetensorsFile() {}

  /** Every tensor of the file by its name as stored; failures name the file and the problem. */
  static Map<String, Tensor> map(Path file, Arena arena) {
    MemorySegment whole;
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      long size = ch.size();
      if (size < 8) {
        throw new ModelLoadException(file, "truncated: " + size + " bytes, a safetensors file has at least 8");
      }
      whole = ch.map(FileChannel.MapMode.READ_ONLY, 0, size, arena);
    } catch (IOException e) {
      throw new ModelLoadException(file, "cannot be read: " + e, e);
    }
    long size = whole.byteSize();
    long headerLength = whole.get(ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 0);
    if (headerLength < 2 || headerLength > size - 8) {
      throw new ModelLoadException(file, "header of " + headerLength + " bytes runs past the end of the file ("
          + size + " bytes)");
    }
    byte[] headerBytes = whole.asSlice(8, headerLength).toArray(ValueLayout.JAVA_BYTE);
    JsonNode header;
    try {
      header = JSON.readTree(new String(headerBytes, StandardCharsets.UTF_8));
    } catch (JacksonException e) {
      throw new ModelLoadException(file, "header is not valid JSON: " + e.getOriginalMessage(), e);
    }
    if (header == null || !header.isObject()) {
      throw new ModelLoadException(file, "header is not a JSON object");
    }
    long dataStart = 8 + headerLength;
    long dataSize = size - dataStart;
    Map<String, Tensor> tensors = new LinkedHashMap<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = header.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      String name = e.getKey();
      if (name.equals("__metadata__")) {
        continue;
      }
      tensors.put(name, tensor(file, name, e.getValue(), whole, dataStart, dataSize));
    }
    return tensors;
  }

  private static Tensor tensor(Path file, String name, JsonNode info, MemorySegment whole, long dataStart, long dataSize) {
    String dtypeName = info.path("dtype").asText();
    DType dtype;
    try {
      dtype = DType.valueOf(dtypeName);
    } catch (IllegalArgumentException e) {
      throw new ModelLoadException(file, "tensor " + name + " has dtype " + dtypeName + ", expected F32, F16, BF16 (or I32 in a GPTQ/AWQ checkpoint)");
    }
    JsonNode shapeNode = info.path("shape");
    JsonNode offsets = info.path("data_offsets");
    if (!shapeNode.isArray() || !offsets.isArray() || offsets.size() != 2) {
      throw new ModelLoadException(file, "tensor " + name + " lacks shape or data_offsets: " + info);
    }
    long[] shape = new long[shapeNode.size()];
    for (int i = 0; i < shape.length; i++) {
      shape[i] = shapeNode.get(i).asLong(-1);
      if (shape[i] < 0) {
        throw new ModelLoadException(file, "tensor " + name + " has a bad shape " + shapeNode);
      }
    }
    long begin = offsets.get(0).asLong(-1);
    long end = offsets.get(1).asLong(-1);
    if (begin < 0 || end < begin || end > dataSize) {
      throw new ModelLoadException(file, "tensor " + name + " data offsets [" + begin + ", " + end
          + "] are out of range of the " + dataSize + " data bytes");
    }
    long expected = Tensor.elementCount(shape) * dtype.bytes();
    if (end - begin != expected) {
      throw new ModelLoadException(file, "tensor " + name + " " + Arrays.toString(shape) + " " + dtype
          + " needs " + expected + " bytes, its data offsets span " + (end - begin));
    }
    return new Tensor(name, dtype, shape, whole.asSlice(dataStart + begin, expected));
  }
}
