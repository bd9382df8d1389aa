package dev.radixserve.server.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.model.ModelConfig;
import dev.radixserve.model.ReferenceGpt2;
import dev.radixserve.model.weights.DType;
import dev.radixserve.model.weights.GptWeights;
import dev.radixserve.model.weights.HfModelLoader;
import dev.radixserve.model.weights.HfModelWriter;
import dev.radixserve.model.weights.RandomGpt2;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code check-model} and {@code serve --model} on a good and a refused model directory. */
class CheckModelCommandTest {

  @TempDir Path dir;

  private static ServeCommandTest.Run run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int status = Main.commandLine(Map.of(), RadixServerLauncher::start, new PrintWriter(out),
        new PrintWriter(err)).execute(args);
    return new ServeCommandTest.Run(status, out.toString(), err.toString());
  }

  @Test
  void loadsRunsOneTokenAndSaysWhatItFound() {
    ModelConfig c = new ModelConfig(2, 2, 16, 32, 260, 1e-5, "gelu").withUntiedHead().withNInner(24);
    int expected;
    try (GptWeights w = RandomGpt2.create(c, 9)) {
      HfModelWriter.writeSharded(w, dir, DType.BF16, 3);
      HfModelWriter.writeByteLevelTokenizer(dir);
      HfModelWriter.writeGenerationConfig(dir, 10, 13);
    }
    try (GptWeights loaded = (GptWeights) HfModelLoader.loadWeights(dir)) {
      int[] ids = {'a', 'b', 'c'}; // the byte-level tokenizer's ids are the bytes
      double[] logits = new ReferenceGpt2(loaded).logits(ids)[ids.length - 1];
      expected = ReferenceGpt2.argmax(Arrays.copyOf(logits, 257));
    }
    ServeCommandTest.Run r = run("check-model", dir.toString(), "--prompt", "abc", "--threads", "1");
    assertEquals(0, r.status(), r.err() + r.out());
    assertTrue(r.out().contains("config      gpt2: 2 layers, 2 heads, n_embd 16, n_inner 24,"
        + " n_positions 32, vocab_size 260, gelu, layer_norm_epsilon 1.0E-5\n"), r.out());
    assertTrue(r.out().contains("lm head     lm_head.weight (untied)\n"), r.out());
    assertTrue(r.out().contains("weights     model-00001-of-00003.safetensors,"
        + " model-00002-of-00003.safetensors, model-00003-of-00003.safetensors via"
        + " model.safetensors.index.json: 29 tensors (29 BF16), "), r.out());
    assertTrue(r.out().contains("tokenizer   vocab.json + merges.txt: 257 tokens (vocab_size pads 3"
        + " more ids, never sampled)\n"), r.out());
    assertTrue(r.out().contains("eos         [10, 13] from generation_config.json\n"), r.out());
    assertTrue(r.out().contains("run         prompt \"abc\" (3 tokens) -> next token " + expected + " "),
        r.out());
    assertTrue(r.out().endsWith("ok\n"), r.out());
  }

  @Test
  void aRefusedModelNamesFileKeyAndValueInCheckModelAndServe() throws IOException {
    try (GptWeights w = RandomGpt2.create(new ModelConfig(1, 1, 4, 8, 257, 1e-5, "gelu_new"), 1)) {
      HfModelWriter.write(w, dir, DType.F32);
    }
    HfModelWriter.writeByteLevelTokenizer(dir);
    Path config = dir.resolve("config.json");
    Files.writeString(config, Files.readString(config).replaceFirst("\\{",
        "{\"scale_attn_by_inverse_layer_idx\": true,"));
    String problem = "config.json: scale_attn_by_inverse_layer_idx true is not supported";
    ServeCommandTest.Run check = run("check-model", dir.toString());
    assertEquals(1, check.status());
    assertTrue(check.err().startsWith("radixserve: check-model: " + problem), check.err());
    ServeCommandTest.Run serve = run("serve", "--model", dir.toString(), "--port", "0");
    assertEquals(1, serve.status());
    assertTrue(serve.err().startsWith("radixserve: " + problem), serve.err());
  }
}
