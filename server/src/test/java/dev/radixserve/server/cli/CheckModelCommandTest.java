package dev.radixserve.server.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.model.ForwardBatch;
import dev.radixserve.model.LlamaConfig;
import dev.radixserve.model.LlamaFamilies;
import dev.radixserve.model.PrequantizedCheckpoints;
import dev.radixserve.model.ModelConfig;
import dev.radixserve.model.OnnxModelRunner;
import dev.radixserve.model.ReferenceGpt2;
import dev.radixserve.model.quant.CheckpointQuantization;
import dev.radixserve.model.quant.QuantMode;
import dev.radixserve.model.quant.QuantSpec;
import dev.radixserve.model.sampling.LogitsSampler;
import dev.radixserve.model.weights.DType;
import dev.radixserve.model.weights.GptWeights;
import dev.radixserve.model.weights.HfModelLoader;
import dev.radixserve.model.weights.HfModelWriter;
import dev.radixserve.model.weights.LlamaWeights;
import dev.radixserve.model.weights.LoadedModel;
import dev.radixserve.model.weights.RandomGpt2;
import dev.radixserve.model.weights.RandomLlama;
import dev.radixserve.model.weights.Tensor;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
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

  /**
   * A Gemma 3 (text) checkpoint that transformers wrote (model-runtime's fixture): the family,
   * the window and the rope of each layer type, and the next token and its logprob as
   * transformers computed them (the fixture's expected.json, step 0).
   */
  @Test
  void gemma3NamesFamilyWindowAndRopePerLayerTypeAndRunsAsTransformers() {
    Path gemma3 = Path.of("..", "model-runtime", "src", "test", "resources", "gemma", "gemma3");
    assertTrue(Files.isDirectory(gemma3), gemma3.toAbsolutePath().toString());
    String prompt = "The radix tree shares prefixes between requests, and sliding windows keep"
        + " only the recent keys 🙂.";
    ServeCommandTest.Run r = run("check-model", gemma3.toString(), "--prompt", prompt,
        "--threads", "1");
    assertEquals(0, r.status(), r.err() + r.out());
    assertTrue(r.out().contains("config      gemma3_text (Gemma 3, text): 3 layers, 4 heads,"
        + " 2 kv heads, head_dim 16,"), r.out());
    assertTrue(r.out().contains("query_pre_attn_scalar 32.0, attention soft-cap none, final"
        + " logit soft-cap none, q/k norm\n"), r.out());
    assertTrue(r.out().contains("2 sliding_attention layers (window 8), rope default theta"
        + " 10000.0\n"), r.out());
    assertTrue(r.out().contains("1 full_attention layers, rope linear theta 1000000.0 factor"
        + " 2.0\n"), r.out());
    // transformers: token 262 at logprob -0.49574559798602186 (a 4-decimal print of it)
    assertTrue(r.out().contains("(55 tokens) -> next token 262 "), r.out());
    String logprob = r.out().replaceAll("(?s).*logprob (-?[0-9.]+) .*", "$1");
    assertEquals(-0.49574559798602186, Double.parseDouble(logprob), 1e-4 + 5e-5, r.out());
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

  /**
   * The quantized check runs the quantized model: its next-token logprob is the quantized
   * runner's own (and not fp32's), and the bytes it reports shrink by exactly what the
   * MatMulNBits format saves on each quantized weight (written out here from the format).
   */
  @Test
  void quantizedCheckRunsTheQuantizedModelAndReportsItsBytes() {
    ModelConfig c = new ModelConfig(2, 2, 64, 32, 260, 1e-5, "gelu").withNInner(128);
    try (GptWeights w = RandomGpt2.create(c, 5)) {
      HfModelWriter.write(w, dir, DType.F32);
    }
    HfModelWriter.writeByteLevelTokenizer(dir);
    int[] ids = {'a', 'b', 'c'};
    String fp32 = logprobLine(ids, QuantSpec.none());
    ServeCommandTest.Run plain = run("check-model", dir.toString(), "--prompt", "abc", "--threads", "1");
    assertEquals(0, plain.status(), plain.err() + plain.out());
    assertTrue(plain.out().contains(fp32), fp32 + " in " + plain.out());
    long noneBytes = bytesOf(plain.out(), "quantization none: ");

    for (String mode : new String[] {"int8", "int4"}) {
      // resolved for the model's width 64: the int8 head's auto blocks are 64 weights
      QuantSpec spec = QuantSpec.of(QuantMode.parse(mode)).withBlockSize(16).resolvedFor(64);
      String expected = logprobLine(ids, spec);
      assertNotEquals(fp32, expected, "quantization changes the logprob at 4 decimals");
      ServeCommandTest.Run r = run("check-model", dir.toString(), "--prompt", "abc", "--threads",
          "1", "--quantization", mode, "--quantization-block-size", "16");
      assertEquals(0, r.status(), r.err() + r.out());
      assertTrue(r.out().contains(expected), expected + " in " + r.out());
      assertTrue(r.out().endsWith("ok\n"), r.out());
      // per layer c_attn 64x192, attn.c_proj 64x64, c_fc 64x128, mlp.c_proj 128x64 (K x N)
      long[][] layers = {{64, 192}, {64, 64}, {64, 128}, {128, 64}};
      long saved = 0;
      for (long[] kn : layers) {
        saved += 2 * (kn[0] * kn[1] * 4 - quantizedBytes(kn[0], kn[1], spec));
      }
      // the tied head: quantized (int8 by default, int4 layers too) for MatMulNBits, and the
      // embedding in the same blocks for GatherBlockQuantized (zero points always given) in
      // place of the fp32 table
      QuantSpec head64 = spec.forHead(64);
      long gather = 260 * 64 * head64.mode().bits() / 8 + 260 * (64 / head64.blockSize()) * 4
          + 260 * ((64 / head64.blockSize() * head64.mode().bits() + 7) / 8);
      long head = spec.lmHead()
          ? quantizedBytes(64, 260, head64) + gather - 260 * 64 * 4 : 0;
      int weights = 8 + (spec.lmHead() ? 1 : 0);
      String prefix = "quantization " + spec.key() + ": " + weights + " linear weights as"
          + " MatMulNBits, ";
      assertTrue(r.out().contains(prefix), prefix + " in " + r.out());
      assertEquals(noneBytes - saved + head, bytesOf(r.out(), prefix), r.out());
    }
  }

  /**
   * A GPTQ checkpoint: check-model says what it holds (its format, I32 tensors, the float
   * model's parameter count, its layers as MatMulNBits on their own blocks) and runs it; asking
   * to quantize it again stops check-model and serve with status 2 and the reason.
   */
  @Test
  void aGptqCheckpointIsDescribedRunAndNotQuantizedAgain() {
    LlamaConfig c = LlamaFamilies.GQA;
    CheckpointQuantization q = new CheckpointQuantization(CheckpointQuantization.Method.GPTQ, 4,
        16, 1);
    try (LlamaWeights w = RandomLlama.create(c, 3)) {
      PrequantizedCheckpoints.write(PrequantizedCheckpoints.pack(w, q, true), dir, DType.F16,
          true);
    }
    HfModelWriter.writeByteLevelTokenizer(dir);
    long params = LlamaWeights.expectedShapes(c).values().stream()
        .mapToLong(Tensor::elementCount).sum();
    ServeCommandTest.Run r = run("check-model", dir.toString(), "--prompt", "abc", "--threads",
        "1");
    assertEquals(0, r.status(), r.err() + r.out());
    assertTrue(r.out().contains("quantized   gptq 4-bit, group 16 (the checkpoint's own blocks)\n"),
        r.out());
    // per layer 7 projections of 4 tensors (qweight, qzeros, scales, g_idx) of which 3 are I32;
    // 2 norms each, the embedding, the final norm and the untied head in F16
    assertTrue(r.out().contains(": 63 tensors (21 F16, 42 I32), " + String.format("%,d", params)
        + " parameters\n"), r.out());
    assertTrue(r.out().contains("quantization gptq-int4/b16/asym/acc4/head-int8-b32: 15 linear"
        + " weights as MatMulNBits, "), r.out());
    assertTrue(r.out().endsWith("ok\n"), r.out());

    ServeCommandTest.Run keep = run("check-model", dir.toString(), "--prompt", "abc", "--threads",
        "1", "--quantization-lm-head", "false");
    assertEquals(0, keep.status(), keep.err() + keep.out());
    assertTrue(keep.out().contains("quantization gptq-int4/b16/asym/acc4: 14 linear weights as"
        + " MatMulNBits, "), keep.out());

    String refusal = "the checkpoint is already quantized (gptq 4-bit, group 16): --quantization"
        + " int4 would quantize its rounded weights again";
    ServeCommandTest.Run again = run("check-model", dir.toString(), "--quantization", "int4");
    assertEquals(2, again.status(), again.err() + again.out());
    assertTrue(again.err().startsWith("radixserve: check-model: " + refusal), again.err());
    ServeCommandTest.Run serve = run("serve", "--model", dir.toString(), "--host", "127.0.0.1",
        "--port", "0", "--num-blocks", "8", "--quantization", "int4");
    assertEquals(2, serve.status(), serve.err() + serve.out());
    assertTrue(serve.err().startsWith("radixserve: " + refusal), serve.err());
  }

  @Test
  void aQuantizationTheModelCannotTakeIsRefusedWithTheReason() {
    try (GptWeights w = RandomGpt2.create(new ModelConfig(1, 2, 48, 32, 257, 1e-5, "gelu"), 2)) {
      HfModelWriter.write(w, dir, DType.F32);
    }
    HfModelWriter.writeByteLevelTokenizer(dir);
    ServeCommandTest.Run r = run("check-model", dir.toString(), "--quantization", "int4");
    assertEquals(2, r.status(), r.err() + r.out());
    assertTrue(r.err().startsWith("radixserve: check-model: cannot quantize h.0.attn.c_attn.weight:"
        + " its input dimension K = 48 is not a multiple of the quantization block size 32"),
        r.err());
    assertTrue(r.err().contains("--quantization-block-size 16"), r.err());
    assertFalse(r.out().endsWith("ok\n"), r.out());

    ServeCommandTest.Run bad = run("check-model", dir.toString(), "--quantization", "int3");
    assertEquals(2, bad.status(), bad.err() + bad.out());
    assertTrue(bad.err().contains("invalid value for quantization from flag --quantization: "
        + "'int3'"), bad.err());
    ServeCommandTest.Run fits = run("check-model", dir.toString(), "--quantization", "int4",
        "--quantization-block-size", "16", "--threads", "1");
    assertEquals(0, fits.status(), fits.err() + fits.out());
  }

  /** MatMulNBits' bytes for a K x N weight: packed codes plus one fp32 scale per block. */
  /** Codes, fp32 scales, and with zero points their uint8 rows (4-bit ones two to a byte). */
  private static long quantizedBytes(long k, long n, QuantSpec spec) {
    long blocks = k / spec.blockSize();
    long zeroPoints = spec.zeroPoints() ? n * ((blocks * spec.mode().bits() + 7) / 8) : 0;
    return n * k * spec.mode().bits() / 8 + n * blocks * 4 + zeroPoints;
  }

  private static long bytesOf(String out, String prefix) {
    int at = out.indexOf(prefix) + prefix.length();
    return Long.parseLong(out.substring(at, out.indexOf(" bytes", at)).replace(",", ""));
  }

  /** The run line's tail as check-model prints it, from the runner under {@code spec}. */
  private String logprobLine(int[] ids, QuantSpec spec) {
    try (LoadedModel m = HfModelLoader.load(dir);
        OnnxModelRunner runner = OnnxModelRunner.create(m.weights(), 16, 1, 1, Map.of(), spec)) {
      float[] logits = runner.forward(
          new ForwardBatch(List.of(new ForwardBatch.Seq(ids, 0, new int[] {0}))))[0];
      float[] sampleable = Arrays.copyOf(logits, m.tokenizer().vocabSize());
      int next = LogitsSampler.argmax(sampleable);
      return String.format("-> next token %d %s, logprob %.4f (", next,
          CheckModelCommand.quoted(m.tokenizer().decode(new int[] {next})),
          LogitsSampler.score(sampleable, next, 0).logprob());
    }
  }
}
