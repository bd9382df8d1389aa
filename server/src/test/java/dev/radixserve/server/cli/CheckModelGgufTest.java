package dev.radixserve.server.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.radixserve.model.gguf.GgmlType;
import dev.radixserve.model.gguf.GgufTestFiles;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@code check-model FILE.gguf} on files llama.cpp's converter wrote, and on a refused one. */
class CheckModelGgufTest {

  static final Path FIXTURES = Path.of("..", "model-runtime", "src", "test", "resources", "gguf");

  @TempDir Path tmp;

  private static ServeCommandTest.Run run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int status = Main.commandLine(Map.of(), RadixServerLauncher::start, new PrintWriter(out),
        new PrintWriter(err)).execute(args);
    return new ServeCommandTest.Run(status, out.toString(), err.toString());
  }

  /** Family, context, types per tensor, footprint; the next token and logprob of transformers. */
  /** Phi-3's longrope and its fused projections, Gemma 3's layer types and ropes, each in blocks. */
  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
      "phi3-q4_0.gguf|config      phi3: 2 layers, 4 heads, 2 kv heads, head_dim 16|rope longrope"
          + " theta 10000.0 factor 2.0 original_max_position_embeddings 256|projections Q4_0 ×14"
          + " repacked bit for bit",
      "gemma3-q8_0.gguf|config      gemma3_text (Gemma 3, text): 6 layers|5 sliding_attention"
          + " layers (window 6), rope default theta 10000.0|quantized   gguf Q8_0 blocks"})
  void describesPhi3AndGemmaFiles(String file, String config, String rope, String blocks) {
    ServeCommandTest.Run r = run("check-model", FIXTURES.resolve(file).toString(), "--threads",
        "1");
    assertEquals(0, r.status(), r.err() + r.out());
    for (String line : new String[] {config, rope, blocks}) {
      assertTrue(r.out().contains(line), line + " in\n" + r.out());
    }
    assertTrue(r.out().endsWith("ok\n"), r.out());
  }

  @Test
  void describesTheFileAndRunsItAsTransformers() throws IOException {
    JsonNode run = new ObjectMapper().readTree(FIXTURES.resolve("llama3-expected.json").toFile())
        .get("runs").get(0);
    ServeCommandTest.Run r = run("check-model", FIXTURES.resolve("llama3-f32.gguf").toString(),
        "--prompt", run.get("prompt").asText(), "--threads", "1");
    assertEquals(0, r.status(), r.err() + r.out());
    assertTrue(r.out().contains("config      llama: 2 layers, 4 heads, 2 kv heads, head_dim 16,"
        + " hidden_size 64, intermediate_size 128, max_position_embeddings 64, vocab_size 534"),
        r.out());
    assertTrue(r.out().contains("gguf        llama3-f32.gguf (llama), file type 0; tensors"
        + " F32 ×21, 432,928 bytes;"), r.out());
    assertTrue(r.out().contains("rope        llama.cpp's rope_freqs.weight: each of the 8"
        + " frequencies divided by its factor"), r.out());
    // llama.cpp's end-of-generation set: eos <|eot_id|>, and <|end_of_text|> by its text
    assertTrue(r.out().contains("eos         [533, 530] from tokenizer.ggml\n"), r.out());
    assertTrue(r.out().contains("projections F32 ×14 as floats"), r.out());
    assertTrue(r.out().contains("tokenizer   the file's tokenizer.ggml.model gpt2, pre llama-bpe"),
        r.out());
    JsonNode step = run.get("steps").get(0);
    assertTrue(r.out().contains("-> next token " + step.get("token").asInt() + " "), r.out());
    String logprob = r.out().replaceAll("(?s).*logprob (-?[0-9.]+) .*", "$1");
    assertEquals(step.get("top_logprobs").get(0).asDouble(), Double.parseDouble(logprob),
        1e-4 + 5e-5, r.out());
    assertTrue(r.out().endsWith("ok\n"), r.out());

    ServeCommandTest.Run q = run("check-model", FIXTURES.resolve("qwen2-q4_0.gguf").toString(),
        "--threads", "1");
    assertEquals(0, q.status(), q.err() + q.out());
    assertTrue(q.out().contains("file type 2; tensors F32 ×11, Q4_0 ×16"), q.out());
    assertTrue(q.out().contains("projections Q4_0 ×14 repacked bit for bit (MatMulNBits"
        + " 4-bit, block 32)"), q.out());
    // labelled by the file's block type, not by the GPTQ layout they pass through
    assertTrue(q.out().contains("quantized   gguf Q4_0 blocks (4-bit, group 32)"), q.out());
    assertTrue(q.out().contains("quantization gguf-int4/b32/"), q.out());
    // (the model line's path aside: a checkout's folder may say gptq)
    assertFalse(q.out().replaceFirst("model       [^\n]*\n", "").contains("gptq"), q.out());
    assertTrue(q.out().endsWith("ok\n"), q.out());

    // a K-quant mix: its Q4_K layers on their own codes by default, the rest requantized
    ServeCommandTest.Run k = run("check-model",
        FIXTURES.resolve("llama3-wide-q4_k_m.gguf").toString(), "--threads", "1");
    assertEquals(0, k.status(), k.err() + k.out());
    assertTrue(k.out().contains("projections Q4_K ×5 as MatMulNBits int4 on the file's own"
        + " codes + a float offset per block (block 32, not requantized) (--quantization int8:"
        + " requantized to int8), Q6_K ×2 requantized to int8"), k.out());
    assertTrue(k.out().contains("quantization int8/bauto64/sym/acc4/gguf-q4k/head-b64"),
        k.out());
    assertTrue(k.out().contains("(chosen; its Q4_K layers on their own codes)"), k.out());
    assertTrue(k.out().contains("decoded from blocks"), k.out());
    assertTrue(k.out().endsWith("ok\n"), k.out());
  }

  /**
   * A Q8_0 file's token embedding and separate LM head (Qwen2's), Q8_0 too, are served on their
   * own blocks under the default int8 head, and said so; a head block size of 64 re-rounds them.
   */
  @Test
  void saysAQ8FilesTablesAreServedOnTheirOwnBlocks() {
    String file = FIXTURES.resolve("qwen2-q8_0.gguf").toString();
    ServeCommandTest.Run own = run("check-model", file, "--threads", "1");
    assertEquals(0, own.status(), own.err() + own.out());
    assertTrue(own.out().contains("quantization gguf-int8/b32/asym/acc4/gguf-q8/head-b64:"),
        own.out());
    assertTrue(own.out().contains("lm head     embed_tokens.weight, lm_head.weight: its own Q8_0"
        + " blocks (MatMulNBits and GatherBlockQuantized int8, block 32, not re-rounded)"),
        own.out());
    assertTrue(own.out().endsWith("ok\n"), own.out());
    ServeCommandTest.Run b64 = run("check-model", file, "--quantization-head-block-size", "64",
        "--threads", "1");
    assertEquals(0, b64.status(), b64.err() + b64.out());
    assertTrue(b64.out().contains("quantization gguf-int8/b32/asym/acc4/head-b64:"), b64.out());
    assertFalse(b64.out().contains("its own Q8_0 blocks"), b64.out());
  }

  /**
   * An explicit {@code --quantization none} serves a K-quant mix's dequantized weights at fp32:
   * the next token's logprob is transformers' on the file's own dequantized weights; {@code auto}
   * is the default's Q4_K layers on their own codes beside int8 ones; {@code int8} requantizes
   * every layer; {@code int4} serves the Q4_K layers on their own codes, the rest in int4.
   */
  @Test
  void anExplicitNoneServesAKQuantFileAtFp32AndAutoRequantizes() throws IOException {
    JsonNode run = new ObjectMapper().readTree(
        FIXTURES.resolve("llama3-wide-q4_k_m-expected.json").toFile()).get("runs").get(0);
    Path file = FIXTURES.resolve("llama3-wide-q4_k_m.gguf");
    ServeCommandTest.Run none = run("check-model", file.toString(), "--quantization", "none",
        "--prompt", run.get("prompt").asText(), "--threads", "1");
    assertEquals(0, none.status(), none.err() + none.out());
    assertTrue(none.out().contains("quantization none: "), none.out());
    assertTrue(none.out().contains("memory      none weights as served"), none.out());
    assertTrue(none.out().contains("(chosen)\nmemory      int8"), none.out());
    JsonNode step = run.get("steps").get(0);
    assertTrue(none.out().contains("-> next token " + step.get("token").asInt() + " "),
        none.out());
    String logprob = none.out().replaceAll("(?s).*logprob (-?[0-9.]+) .*", "$1");
    assertEquals(step.get("top_logprobs").get(0).asDouble(), Double.parseDouble(logprob),
        1e-4 + 5e-5, none.out());

    ServeCommandTest.Run auto = run("check-model", file.toString(), "--quantization", "auto",
        "--threads", "1");
    assertEquals(0, auto.status(), auto.err() + auto.out());
    assertTrue(auto.out().contains("quantization int8/bauto64/sym/acc4/gguf-q4k/head-b64"),
        auto.out());
    ServeCommandTest.Run int8 = run("check-model", file.toString(), "--quantization", "int8",
        "--threads", "1");
    assertEquals(0, int8.status(), int8.err() + int8.out());
    assertTrue(int8.out().contains("quantization int8/bauto64/sym/acc4/head-b64"), int8.out());
    assertTrue(int8.out().contains("(chosen)\nmemory      int4"), int8.out());
    // int4: the Q4_K layers on their own codes with offsets, the Q6_K ones re-rounded
    ServeCommandTest.Run int4 = run("check-model", file.toString(), "--quantization", "int4",
        "--threads", "1");
    assertEquals(0, int4.status(), int4.err() + int4.out());
    assertTrue(int4.out().contains("quantization int4/bauto128/asym/acc4/gguf-q4k/head-int8-b256"),
        int4.out());
    assertTrue(int4.out().contains("(chosen; its Q4_K layers on their own codes)\nkv budget"
        + "   auto: "), int4.out());
    assertTrue(int4.out().contains("\nplan        weights file"), int4.out());
  }

  @Test
  void anUnservedTypeIsRefusedNamingTensorAndTypeInCheckModelAndServe() throws IOException {
    Path file = GgufTestFiles.rewrite(FIXTURES.resolve("llama3-f32.gguf"), tmp.resolve("k.gguf"), kv -> { },
        t -> t.replaceAll(e -> e.name().equals("blk.1.attn_v.weight")
            ? new GgufTestFiles.Entry(e.name(), new long[] {256, 32}, GgmlType.IQ2_XXS,
                new byte[32 * 66]) : e));
    ServeCommandTest.Run check = run("check-model", file.toString());
    assertEquals(1, check.status(), check.out());
    assertTrue(check.err().contains("k.gguf: tensor blk.1.attn_v.weight is IQ2_XXS"), check.err());
    ServeCommandTest.Run serve = run("serve", "--model", file.toString(), "--port", "0");
    assertEquals(1, serve.status(), serve.out());
    assertTrue(serve.err().contains("tensor blk.1.attn_v.weight is IQ2_XXS"), serve.err());
  }
}
