package dev.radixserve.model.weights;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Which layers of a Llama-family model attend through a sliding window, as transformers 5's
 * models decide it:
 *
 * <ul>
 *   <li>{@code mistral}, {@code phi3}: every layer, whenever {@code sliding_window} is not null;
 *   <li>{@code qwen2}, {@code qwen3}: the window is {@code sliding_window} only under {@code
 *       use_sliding_window}; the layers are those that {@code layer_types} names {@code
 *       sliding_attention}, or, without it, layers {@code max_window_layers} and up;
 *   <li>{@code llama}: none (its config class has no window; a stray key is ignored, as
 *       transformers ignores it).
 * </ul>
 *
 * A query at position q sees positions q - W + 1 .. q (transformers' {@code
 * sliding_window_causal_mask_function}); the paged kernel reads only those (its {@code
 * local_window_size}). Every block stays in the pool and in the radix cache: a prefix match
 * reuses a windowed layer's blocks exactly as a full layer's, so cache on ≡ off needs nothing
 * more. The blocks that left every window are still held (SGLang's SWARadixCache frees them
 * per layer type; here the pool is shared by all layers).
 */
final class SlidingWindows {

  private SlidingWindows() {}

  /** Per layer, W or 0 for full attention; empty when no window binds. */
  static List<Integer> read(JsonNode c, Path file, String type, int layers, int positions) {
    Integer window = switch (type) {
      case "mistral", "phi3" -> window(c, file);
      case "qwen2", "qwen3" -> ConfigValues.bool(c, file, "use_sliding_window", false)
          ? window(c, file) : null;
      default -> null;
    };
    List<Integer> windows = new ArrayList<>(Collections.nCopies(layers, 0));
    boolean any = false;
    for (int i = 0; i < layers; i++) {
      if (window != null && sliding(c, file, type, i, layers)) {
        windows.set(i, window);
        any = true;
      } else if (window == null && type.startsWith("qwen") && layerType(c, file, i, layers)
          .equals("sliding_attention")) {
        throw new ModelLoadException(file, "layer_types[" + i + "] sliding_attention, but no"
            + " window applies (use_sliding_window " + c.get("use_sliding_window")
            + ", sliding_window " + c.get("sliding_window") + ")");
      }
    }
    // a window as long as the served positions never binds: plain attention computes the same
    return any && window < positions ? windows : List.of();
  }

  private static boolean sliding(JsonNode c, Path file, String type, int layer, int layers) {
    if (type.equals("mistral") || type.equals("phi3")) {
      return true;
    }
    if (c.hasNonNull("layer_types")) {
      return layerType(c, file, layer, layers).equals("sliding_attention");
    }
    JsonNode first = c.get("max_window_layers");
    int from = first == null || first.isNull() ? 28 : ConfigValues.intField(c, file,
        "max_window_layers");
    return layer >= from;
  }

  private static String layerType(JsonNode c, Path file, int layer, int layers) {
    JsonNode types = c.get("layer_types");
    if (types == null || types.isNull()) {
      return "full_attention";
    }
    if (!types.isArray() || types.size() != layers) {
      throw new ModelLoadException(file, "layer_types " + types + " is not a list of "
          + layers + " layer types (num_hidden_layers)");
    }
    String t = types.get(layer).asText();
    if (!t.equals("full_attention") && !t.equals("sliding_attention")) {
      throw new ModelLoadException(file, "layer_types[" + layer + "] " + types.get(layer)
          + " is not supported (full_attention or sliding_attention)");
    }
    return t;
  }

  private static Integer window(JsonNode c, Path file) {
    JsonNode w = c.get("sliding_window");
    if (w == null || w.isNull()) {
      return null;
    }
    if (!w.isIntegralNumber() || !w.canConvertToInt() || w.asInt() <= 0) {
      throw new ModelLoadException(file, "sliding_window " + w + " is not a positive integer");
    }
    return w.asInt();
  }
}
