package dev.radixserve.model.quant;

import java.util.Set;

/**
 * How a model's linear layers are quantized into ONNX Runtime's {@code com.microsoft.MatMulNBits}
 * format: block-wise along the input dimension K, one scale (and with {@code zeroPoints} one zero
 * point) per block of {@code blockSize} weights.
 *
 * @param mode none, int8 or int4
 * @param blockSize weights per block along K: a power of two from 16 to 256 (MatMulNBits'
 *     constraint) that divides the K of every quantized weight, or {@value #AUTO_BLOCK_SIZE}
 *     for auto ({@link #blockFor}: the default, int4's 128 and int8's 64 where they divide the
 *     weight's K)
 * @param zeroPoints asymmetric blocks (scale and zero point from the block's min and max); false:
 *     symmetric (scale from the value of largest magnitude, the format's default zero point)
 * @param headMode how the LM head is stored: {@link QuantMode#NONE} (as the checkpoint has it),
 *     or quantized as int8 or int4 in this spec's blocks (the embeddings stay as they are either
 *     way). It may differ from {@code mode}: int4 layers take an int8 head by default
 * @param headBlockSize the LM head's own block size, or 0 for auto ({@link #headBlockFor}): a
 *     large int8 head is a third or more of a small model's bytes per decode step, and larger
 *     blocks there cost no measurable accuracy (docs/benchmarks/journal/2026-11-21-to-28.md, "The LM head's own block size")
 * @param accuracyLevel MatMulNBits' {@code accuracy_level}: 0 (unset: compute in A's type), 1
 *     (fp32) .. 4 (A quantized to int8 per block on the fly: the CPU's integer dot products)
 * @param checkpoint where the layers' blocks come from: null when quantized here at load from the
 *     checkpoint's float weights ({@link BlockQuantizer}); else the checkpoint's own GPTQ or AWQ
 *     blocks, repacked ({@link CheckpointRepacker}; mode and zero points are then the
 *     checkpoint's, the block size its group). The LM head,
 *     which those checkpoints keep in floats, is quantized here either way when {@code
 *     headMode} says so.
 * @param offsetWeights projections served on a GGUF file's own Q4_K codes with a float offset
 *     per block ({@link Q4KRepacker}) whatever {@code mode} says, which then covers the others:
 *     a Q4_K_M file mixes Q4_K with Q6_K layers. {@link #forModel} fills it under {@link
 *     #OFFSETS_MODE} only. Each weight's own spec ({@link #forWeight(String, long)}) says which
 *     it is; empty for every other model.
 * @param q8Tables the token embedding and LM head tables (a tied one, or either of the two) a
 *     GGUF file holds in Q8_0 blocks, served on those blocks as they are ({@link
 *     GgmlBlockRepacker}: int8, block 32, the fp16 scale widened, zero point 128) by the head's
 *     MatMulNBits and the embedding's GatherBlockQuantized, rather than re-rounded into the
 *     head's blocks. {@link #forModel} fills it where the head is int8 in auto blocks (or 32,
 *     the file's); empty for every other model and head.
 */
public record QuantSpec(QuantMode mode, int blockSize, boolean zeroPoints, QuantMode headMode,
    int headBlockSize, int accuracyLevel, CheckpointQuantization checkpoint,
    Set<String> offsetWeights, Set<String> q8Tables) {

  /** Block size when none is given (see docs/benchmarks/journal/2026-11-21-to-28.md: 32 against 64). */
  public static final int DEFAULT_BLOCK_SIZE = 32;
  /** The layers' block size "auto": each weight's own ({@link #blockFor}). */
  public static final int AUTO_BLOCK_SIZE = 0;
  /**
   * The largest block auto gives an int8 weight: 64. ONNX Runtime packs a block with a float
   * scale and a float block sum, so an int8 block of 32 costs 1.25 bytes a weight, 64 1.125 and
   * 128 1.06, at Q8_0's accuracy in each. Not 128: its 8-bit kernel in blocks of 128 gives a row
   * other bits depending on the rows of its call, so blocks of 128 need an even row count
   * ({@link #evenRows}), and that padding cost a one-token decode step 15% on the Llama-3.2-1B
   * shape for 89 MiB less (docs/benchmarks/journal/2026-11-29e-even-rows.md); blocks of 64 give the
   * same bits at any row count without it.
   */
  public static final int DEFAULT_INT8_BLOCK_SIZE = 64;
  /**
   * The largest block auto gives an int4 weight: 128 (with zero points), 0.5625 bytes a weight
   * once packed against 0.625 for 64 and 0.75 for 32: GPTQ's and AWQ's usual group, and ONNX
   * Runtime's own quantizer's default. On three trained models it moved RMS Δp 5.5–11% above
   * blocks of 64 (with the head's blocks of 256, 1.08× llama.cpp Q4_0's where both were
   * measured), for ~58 MiB less on the Llama-3.2-1B shape and a faster decode and prefill: with
   * the head's 256 it took that shape within 1.2× of Q4_0's memory
   * (docs/benchmarks/journal/2026-11-30h-int4-blocks-128.md). Every
   * 4-bit block of 32 or more needs an even row count for the same bits at any row count
   * ({@link #evenRows}). Until 2026-11-29 int4 took 32, unpadded; until 2026-11-30, 64.
   */
  public static final int DEFAULT_INT4_BLOCK_SIZE = 128;
  /**
   * An int8 head's block size under auto beside int8 layers, where it divides the head's K (64:
   * as the layers').
   */
  public static final int DEFAULT_INT8_HEAD_BLOCK_SIZE = 64;
  /**
   * An int8 head's block size under auto beside int4 layers: 256 (1.03 bytes a weight packed,
   * against 1.125 for 64: 24 MiB less on the Llama-3.2-1B shape's 128,256 × 2,048 head) for
   * 1.6–2.4% more RMS Δp on the trained models (docs/benchmarks/journal/2026-11-30g-head-256.md).
   * int8 layers keep 64: their users asked for Q8_0's accuracy, not the last MiB.
   */
  public static final int DEFAULT_INT4_HEAD_BLOCK_SIZE = 256;
  /** The CPU's level: int8 activations against int8/int4 weights (see docs/benchmarks/journal/2026-11-21-to-28.md). */
  public static final int CPU_ACCURACY_LEVEL = 4;

  /**
   * The {@code accuracy_level} a device runs MatMulNBits at: on the CPU {@value
   * #CPU_ACCURACY_LEVEL} (int8 dot products, measured faster; ONNX Runtime has no fp32-compute
   * kernel for 8-bit weights on x86); CUDA's kernel computes in the activations' type and takes
   * no level (0).
   */
  public static int accuracyLevelFor(boolean cuda) {
    return cuda ? 0 : CPU_ACCURACY_LEVEL;
  }

  public QuantSpec {
    if (mode == null) {
      throw new IllegalArgumentException("quantization mode is required");
    }
    if (blockSize != AUTO_BLOCK_SIZE && !validBlockSize(blockSize)) {
      throw new IllegalArgumentException("invalid quantization block size " + blockSize
          + " (allowed: 16, 32, 64, 128, 256: MatMulNBits takes a power of two from 16)");
    }
    if (headBlockSize != 0 && !validBlockSize(headBlockSize)) {
      throw new IllegalArgumentException("invalid LM head block size " + headBlockSize
          + " (allowed: auto, 16, 32, 64, 128, 256)");
    }
    if (accuracyLevel < 0 || accuracyLevel > 4) {
      throw new IllegalArgumentException("invalid accuracy_level " + accuracyLevel + " (0..4)");
    }
    if (headMode == null || mode == QuantMode.NONE && headMode != QuantMode.NONE) {
      throw new IllegalArgumentException("LM head mode " + headMode + " with layers " + mode);
    }
    if (blockSize == AUTO_BLOCK_SIZE && mode == QuantMode.NONE) {
      throw new IllegalArgumentException("an auto block size with no quantization");
    }
    if (checkpoint != null && (mode != checkpoint.mode()
        || blockSize != checkpoint.groupSize()
        || zeroPoints == checkpoint.offsets())) {
      throw new IllegalArgumentException(mode + "/b" + blockSize + " for a checkpoint in "
          + checkpoint.describe());
    }
    offsetWeights = Set.copyOf(offsetWeights);
    if (!offsetWeights.isEmpty() && (mode == QuantMode.NONE || checkpoint != null)) {
      throw new IllegalArgumentException("Q4_K offset weights under " + mode.label()
          + (checkpoint != null ? " for a checkpoint in " + checkpoint.describe() : ""));
    }
    q8Tables = Set.copyOf(q8Tables);
    if (!q8Tables.isEmpty() && headMode != QuantMode.INT8) {
      throw new IllegalArgumentException("Q8_0 tables " + q8Tables + " with an LM head in "
          + headMode.label() + " (their own blocks are int8)");
    }
  }

  /** Layers in one mode, some perhaps on a file's Q4_K codes, no table on Q8_0 blocks. */
  public QuantSpec(QuantMode mode, int blockSize, boolean zeroPoints, QuantMode headMode,
      int headBlockSize, int accuracyLevel, CheckpointQuantization checkpoint,
      Set<String> offsetWeights) {
    this(mode, blockSize, zeroPoints, headMode, headBlockSize, accuracyLevel, checkpoint,
        offsetWeights, Set.of());
  }

  /**
   * The configured mode under which a GGUF file's Q4_K projections are still served on their own
   * codes ({@link #offsetWeights}): int4, which otherwise re-rounds them onto integer zero points
   * (8% relative RMS off the file's weights, bench/gguf/requant_error.py) at the same bytes. An
   * explicit {@code --quantization int8} requantizes them like the rest. Under {@code auto} they
   * are on their codes whatever mode auto gives the file's other blocks ({@link
   * #forModel(QuantSpec, CheckpointQuantization, QuantMode, Set, int, HeadSetting)}).
   */
  public static final QuantMode OFFSETS_MODE = QuantMode.INT4;

  private static QuantSpec withOffsets(QuantSpec spec, Set<String> offsetWeights) {
    return spec.mode() == OFFSETS_MODE ? spec.withOffsetWeights(offsetWeights) : spec;
  }

  /** Layers in one mode, none served on a file's Q4_K codes. */
  public QuantSpec(QuantMode mode, int blockSize, boolean zeroPoints, QuantMode headMode,
      int headBlockSize, int accuracyLevel, CheckpointQuantization checkpoint) {
    this(mode, blockSize, zeroPoints, headMode, headBlockSize, accuracyLevel, checkpoint,
        Set.of());
  }

  /** Layers quantized here at load (no {@link #checkpoint}). */
  public QuantSpec(QuantMode mode, int blockSize, boolean zeroPoints, QuantMode headMode,
      int headBlockSize, int accuracyLevel) {
    this(mode, blockSize, zeroPoints, headMode, headBlockSize, accuracyLevel, null);
  }

  /** @param lmHead quantize the LM head too, in the layers' own mode and block size */
  public QuantSpec(QuantMode mode, int blockSize, boolean zeroPoints, boolean lmHead,
      int accuracyLevel) {
    this(mode, blockSize, zeroPoints, lmHead ? mode : QuantMode.NONE, blockSize, accuracyLevel);
  }

  /** Whether MatMulNBits takes {@code size} as block_size: a power of two from 16 to 256. */
  public static boolean validBlockSize(int size) {
    return size >= 16 && size <= 256 && Integer.bitCount(size) == 1;
  }

  /** Weights as they are: plain MatMul. */
  public static QuantSpec none() {
    return new QuantSpec(QuantMode.NONE, DEFAULT_BLOCK_SIZE, false, QuantMode.NONE, 0, 0);
  }

  /**
   * {@code mode} with the defaults (docs/benchmarks/journal/2026-11-21-to-28.md, "Quantized
   * weights"): the mode's block size ({@link #defaultBlockSize}: 32 for int4, auto for int8),
   * zero points under int4 only ({@link #defaultZeroPoints}), the CPU's accuracy level, and the LM head in
   * int8 under both int8 and int4 (an int8 head costs next to nothing in accuracy and reads a
   * quarter of fp32's bytes; a 4-bit head costs far more: llama.cpp likewise writes Q4_0's output
   * matrix at 6 bits and Q8_0's at 8) in blocks of its own size (auto).
   */
  public static QuantSpec of(QuantMode mode) {
    return new QuantSpec(mode, defaultBlockSize(mode), defaultZeroPoints(mode),
        defaultHeadMode(mode), 0, CPU_ACCURACY_LEVEL);
  }

  /** The layers' block size unless told otherwise: auto ({@link #blockFor}). */
  public static int defaultBlockSize(QuantMode mode) {
    return mode == QuantMode.NONE ? DEFAULT_BLOCK_SIZE : AUTO_BLOCK_SIZE;
  }

  /** The largest block auto gives a weight of {@code mode}: 128 for int4, 64 for int8. */
  public static int largestAutoBlock(QuantMode mode) {
    return mode == QuantMode.INT4 ? DEFAULT_INT4_BLOCK_SIZE : DEFAULT_INT8_BLOCK_SIZE;
  }

  /**
   * The block a weight of {@code k} inputs is quantized in: the one set, or under auto the
   * largest of {@link #largestAutoBlock} and its halves down to 32 that divides {@code k} (32
   * when none does, which {@link #requireDivides} then refuses).
   */
  public int blockFor(long k) {
    if (blockSize != AUTO_BLOCK_SIZE) {
      return blockSize;
    }
    int b = largestAutoBlock(mode);
    while (b > DEFAULT_BLOCK_SIZE && k % b != 0) {
      b /= 2;
    }
    return b;
  }

  /**
   * The spec a weight of {@code k} inputs is quantized under: this one, its block resolved (and
   * no {@link #offsetWeights}: it speaks for one weight).
   */
  public QuantSpec forWeight(long k) {
    QuantSpec one = offsetWeights.isEmpty() ? this : withOffsetWeights(Set.of());
    return blockSize == AUTO_BLOCK_SIZE ? one.withBlockSize(blockFor(k)) : one;
  }

  /**
   * The spec the weight named {@code weight} of {@code k} inputs is served under: for one of
   * {@link #offsetWeights}, the file's Q4_K codes (int4, blocks of 32, no zero points, {@link
   * CheckpointQuantization#GGUF_Q4K}); for one of {@link #q8Tables}, the file's Q8_0 blocks
   * ({@link CheckpointQuantization#GGUF_Q8_0}); else {@link #forWeight(long)}.
   */
  public QuantSpec forWeight(String weight, long k) {
    if (q8Tables.contains(weight)) {
      CheckpointQuantization q8 = CheckpointQuantization.GGUF_Q8_0;
      return new QuantSpec(q8.mode(), q8.groupSize(), true, headMode, headBlockSize,
          accuracyLevel, q8);
    }
    if (!offsetWeights.contains(weight)) {
      return forWeight(k);
    }
    CheckpointQuantization q4k = CheckpointQuantization.GGUF_Q4K;
    return new QuantSpec(q4k.mode(), q4k.groupSize(), false, headMode, headBlockSize,
        accuracyLevel, q4k);
  }

  /** This spec with {@code names} served on their file's Q4_K codes ({@link #offsetWeights}). */
  public QuantSpec withOffsetWeights(Set<String> names) {
    return new QuantSpec(mode, blockSize, zeroPoints, headMode, headBlockSize, accuracyLevel,
        checkpoint, names, q8Tables);
  }

  /** This spec with {@code names} served on their file's Q8_0 blocks ({@link #q8Tables}). */
  public QuantSpec withQ8Tables(Set<String> names) {
    return new QuantSpec(mode, blockSize, zeroPoints, headMode, headBlockSize, accuracyLevel,
        checkpoint, offsetWeights, names);
  }

  /**
   * {@code spec} with {@code tables} on their own Q8_0 blocks ({@link #q8Tables}) where its head
   * is int8 in blocks of auto or 32, the file's: another head mode or block size is asked for
   * by a flag, and gets the tables re-rounded as asked.
   */
  private static QuantSpec withQ8Tables(QuantSpec spec, Set<String> tables) {
    boolean fileBlocks = spec.headBlockSize() == 0
        || spec.headBlockSize() == CheckpointQuantization.GGUF_Q8_0.groupSize();
    return spec.headMode() == QuantMode.INT8 && fileBlocks ? spec.withQ8Tables(tables) : spec;
  }

  /** Whether {@link #blockSize} is what {@link #of} gives this mode (a config says auto). */
  public boolean hasDefaultBlockSize() {
    return blockSize == defaultBlockSize(mode);
  }


  /**
   * Whether {@code mode} takes zero points unless told otherwise: under int4 yes. On a trained
   * model (docs/benchmarks/journal/2026-11-21-to-28.md, "Accuracy on a trained model") 4-bit blocks with a zero point followed
   * fp32 closer than symmetric ones (mean |Δ logprob| 0.040 against 0.047, greedy agreement 88 %
   * against 77 %) at the same speed; 8-bit blocks gained nothing measurable, and stay symmetric.
   * (Random weights, symmetric about zero, showed no difference.)
   */
  public static boolean defaultZeroPoints(QuantMode mode) {
    return mode == QuantMode.INT4;
  }

  /** How {@code mode} stores the LM head unless told otherwise: int8 when quantizing at all. */
  public static QuantMode defaultHeadMode(QuantMode mode) {
    return mode == QuantMode.NONE ? QuantMode.NONE : QuantMode.INT8;
  }

  /** Whether {@link #zeroPoints} is what {@link #of} gives this mode (a config says auto). */
  public boolean hasDefaultZeroPoints() {
    return zeroPoints == defaultZeroPoints(mode);
  }

  /** Whether the LM head is quantized (in {@link #headMode}). */
  public boolean lmHead() {
    return headMode != QuantMode.NONE;
  }

  /**
   * The LM head's block size for a head of {@code k} inputs: the one set, or under auto an int8
   * head's {@value #DEFAULT_INT8_HEAD_BLOCK_SIZE} beside int8 layers and {@value
   * #DEFAULT_INT4_HEAD_BLOCK_SIZE} beside int4 ones (or the layers' block if larger), halved until
   * it divides {@code k} but never below the layers' block (which divides every layer's K, the
   * head's among them); an int4 head, whose accuracy suffers from larger blocks, the layers'.
   */
  public int headBlockFor(long k) {
    if (headBlockSize != 0) {
      return headBlockSize;
    }
    int floor = blockFor(k);
    if (headMode != QuantMode.INT8) {
      return floor;
    }
    int b = Math.max(mode == QuantMode.INT4 ? DEFAULT_INT4_HEAD_BLOCK_SIZE
        : DEFAULT_INT8_HEAD_BLOCK_SIZE, floor);
    while (b > floor && k % b != 0) {
      b /= 2;
    }
    return b;
  }

  /**
   * The spec the LM head of {@code k} inputs is quantized under: the head's mode and block size
   * as this one's own, quantized here (a GPTQ or AWQ checkpoint's head is a float one), except
   * {@link #q8Tables}, served on the file's blocks ({@link #forWeight(String, long)}).
   */
  public QuantSpec forHead(long k) {
    int b = headBlockFor(k);
    return new QuantSpec(headMode, b, zeroPoints, headMode, b, accuracyLevel, null, Set.of(),
        q8Tables);
  }

  /** This spec with auto resolved for a model whose LM head reads {@code hiddenSize} inputs. */
  public QuantSpec resolvedFor(long hiddenSize) {
    return lmHead() ? withHeadBlockSize(headBlockFor(hiddenSize)) : this;
  }

  public boolean quantized() {
    return mode != QuantMode.NONE;
  }

  /**
   * Whether MatMulNBits in this spec's blocks is given an even number of rows (the graph pads an
   * odd count with a zero row, {@code graph.EvenRows}): on the CPU ({@value #CPU_ACCURACY_LEVEL}),
   * in blocks larger than {@link #largestBlockWithoutEvenRows}. ONNX Runtime's kernel in those
   * blocks computes an odd call's last row with another summation order than the rows it takes in
   * pairs, so a row's bits depended on its call (MatMulNBitsChunkingTest); the prefix cache needs
   * KV computed in one chunking to equal KV computed in another.
   */
  public boolean evenRows() {
    return quantized() && accuracyLevel == CPU_ACCURACY_LEVEL
        && blockSize > largestBlockWithoutEvenRows(mode.bits());
  }

  /**
   * The largest block that gave every row the same bits at any row count without padding, one
   * row (a decode step) among them (MatMulNBitsChunkingTest, 2026-11-29, K = 1,024 to 8,192, 1
   * and 2 threads): 16 for 4 bits, 64 for 8 bits.
   */
  public static int largestBlockWithoutEvenRows(int bits) {
    return bits == 4 ? 16 : 64;
  }

  /** This spec with another block size. */
  public QuantSpec withBlockSize(int size) {
    return new QuantSpec(mode, size, zeroPoints, headMode, headBlockSize, accuracyLevel,
        checkpoint, offsetWeights, q8Tables);
  }

  public QuantSpec withZeroPoints(boolean on) {
    return new QuantSpec(mode, blockSize, on, headMode, headBlockSize, accuracyLevel, checkpoint,
        offsetWeights, q8Tables);
  }

  /** The LM head quantized in the layers' own mode ({@code on}), or left as it is. */
  public QuantSpec withLmHead(boolean on) {
    return withHeadMode(on ? mode : QuantMode.NONE);
  }

  public QuantSpec withHeadMode(QuantMode head) {
    // the tables' own blocks are int8: another head re-rounds them
    return new QuantSpec(mode, blockSize, zeroPoints, head, headBlockSize, accuracyLevel,
        checkpoint, offsetWeights, head == QuantMode.INT8 ? q8Tables : Set.of());
  }

  /** This spec with the LM head's block size set ({@code size}), or auto (0). */
  public QuantSpec withHeadBlockSize(int size) {
    return new QuantSpec(mode, blockSize, zeroPoints, headMode, size, accuracyLevel,
        checkpoint, offsetWeights, q8Tables);
  }

  public QuantSpec withAccuracyLevel(int level) {
    return new QuantSpec(mode, blockSize, zeroPoints, headMode, headBlockSize, level,
        checkpoint, offsetWeights, q8Tables);
  }

  /**
   * Everything here that changes the numbers a model computes, as one stable string: {@code none},
   * or e.g. {@code int4/b32/asym/acc4} ({@code gptq-} or {@code awq-} before it when the blocks
   * are the checkpoint's own; {@code /head}
   * when the LM head is quantized in the same mode, {@code /head-int8} when in another, then
   * {@code -b128} when in blocks of another size,
   * {@code /gguf-q4k} before the head when some layers are a GGUF file's Q4_K codes with offsets,
   * {@code /gguf-q8} before it when the embedding or LM head is a file's own Q8_0 blocks ({@link
   * #q8Tables}; the head's block size then speaks for a table that is not),
   * {@code -bauto} while auto is not {@link #resolvedFor resolved}; the layers' auto reads {@code
   * bauto128} under int4 and {@code bauto64} under int8, its largest block). (From 2026-11-29
   * until the graph's even rows, a GPTQ/AWQ group of 128 was served as blocks of 32, keyed
   * {@code /b32/g128}.) KV blocks computed under one
   * key are not the blocks of another, so caches and block hashes that outlive a process or
   * leave it include this, resolved for the model.
   */
  public String key() {
    if (!quantized()) {
      return "none";
    }
    String head = !lmHead() ? ""
        : (headMode == mode ? "/head" : "/head-" + headMode.label())
            + (headBlockSize == 0 ? "-bauto" : headBlockSize != blockSize ? "-b" + headBlockSize
                : "");
    // auto names its largest block: weights quantized when auto meant 128 are another model
    return (checkpoint == null ? "" : checkpoint.method().label() + "-") + mode.label() + "/b"
        + (blockSize == AUTO_BLOCK_SIZE ? "auto" + largestAutoBlock(mode) : blockSize)
        + (zeroPoints ? "/asym" : "/sym")
        + "/acc" + accuracyLevel + (offsetWeights.isEmpty() ? "" : "/gguf-q4k")
        + (q8Tables.isEmpty() ? "" : "/gguf-q8") + head;
  }

  /**
   * The quantization a model runs under: {@code configured} for float checkpoints; for a GPTQ or
   * AWQ checkpoint its own blocks (mode, zero points; a MatMulNBits block per group), at {@code
   * accuracyLevel}, with
   * the LM head (a float one in those checkpoints) as {@code head} says ({@code
   * --quantization-lm-head} and {@code --quantization-head-block-size}, which a float checkpoint
   * reads through {@code configured}): by default as {@link #of} quantizes it under that mode,
   * int8 in blocks of its own size. Unresolved ({@link #resolvedFor}).
   *
   * @param checkpoint the model's own quantization, or null
   * @throws QuantizationException when {@code configured} quantizes too (the flag would ask for
   *     the checkpoint's already rounded weights to be rounded again), or when {@code head} sets
   *     a block size for a head it leaves unquantized
   */
  public static QuantSpec forModel(QuantSpec configured, CheckpointQuantization checkpoint,
      int accuracyLevel, HeadSetting head) {
    return forModel(configured, checkpoint, QuantMode.NONE, accuracyLevel, head);
  }

  /**
   * As {@link #forModel(QuantSpec, CheckpointQuantization, int, HeadSetting)}, for weights that
   * are requantized unless told otherwise ({@code ModelWeights.requantizeAs}, a GGUF file's
   * K-quants): when {@code configured} quantizes nothing, {@code requantize} with its defaults
   * ({@link #of}) and the LM-head flags of {@code head}; a configured int8 or int4 is taken as
   * it is.
   */
  public static QuantSpec forModel(QuantSpec configured, CheckpointQuantization checkpoint,
      QuantMode requantize, int accuracyLevel, HeadSetting head) {
    return forModel(configured, checkpoint, requantize, Set.of(), accuracyLevel, head);
  }

  /**
   * As {@link #forModel(QuantSpec, CheckpointQuantization, QuantMode, int, HeadSetting)}, with
   * {@code offsetWeights} ({@code ModelWeights.offsetWeights}, a GGUF file's Q4_K projections)
   * served on their own codes under auto (the others in {@code requantize}) and under a
   * configured {@link #OFFSETS_MODE}, requantized under a configured int8. Auto serves them so
   * for the file's sake: they are its own weights, which requantizing rounds a second time
   * (GgufQ4KServingTest; 1B: mean |Δ logprob| 0.044 against 0.058), and they hold 0.875 bytes a
   * weight packed (codes, scale, MatMulNBits' block sum, the offset) against int8's 1.125. On a
   * Zen 5 VM decode ran 1.05x int8's rate and prefill 0.75x, still above llama-server's
   * (docs/benchmarks/journal/2026-12-02c-q4k-auto.md).
   */
  public static QuantSpec forModel(QuantSpec configured, CheckpointQuantization checkpoint,
      QuantMode requantize, Set<String> offsetWeights, int accuracyLevel, HeadSetting head) {
    if (checkpoint == null && !configured.quantized() && requantize != QuantMode.NONE) {
      QuantSpec spec = of(requantize).withAccuracyLevel(accuracyLevel);
      if (head.lmHead() != null) {
        spec = spec.withLmHead(head.lmHead());
      }
      spec = head.blockSize() == null ? spec : spec.withHeadBlockSize(head.blockSize());
      return spec.withOffsetWeights(offsetWeights);
    }
    if (checkpoint == null) {
      return withOffsets(configured, offsetWeights);
    }
    if (configured.quantized()) {
      throw new QuantizationException("the checkpoint is already quantized ("
          + checkpoint.describe() + "): --quantization " + configured.mode().label()
          + " would quantize its rounded weights again; leave --quantization at none to serve"
          + " the checkpoint's own blocks");
    }
    QuantMode mode = checkpoint.mode();
    QuantMode headMode = head.lmHead() == null ? defaultHeadMode(mode)
        : head.lmHead() ? mode : QuantMode.NONE;
    if (headMode == QuantMode.NONE && head.blockSize() != null) {
      throw new QuantizationException("quantization-head-block-size " + head.blockSize()
          + " is for a quantized LM head, and quantization-lm-head false leaves it as the"
          + " checkpoint has it");
    }
    return new QuantSpec(mode, checkpoint.groupSize(), true, headMode,
        head.blockSize() == null ? 0 : head.blockSize(), accuracyLevel, checkpoint);
  }

  /**
   * As {@link #forModel(QuantSpec, CheckpointQuantization, QuantMode, Set, int, HeadSetting)},
   * with {@code q8Tables} ({@code ModelWeights.q8Tables}, a GGUF file's token embedding and LM
   * head in Q8_0) served on their own blocks where the head is int8 in auto blocks or the file's
   * 32 ({@link #q8Tables}): re-rounding them into the head's blocks of 64 would round the file's
   * codes a second time, to save 0.125 bytes a weight of one table.
   */
  public static QuantSpec forModel(QuantSpec configured, CheckpointQuantization checkpoint,
      QuantMode requantize, Set<String> offsetWeights, Set<String> q8Tables, int accuracyLevel,
      HeadSetting head) {
    return withQ8Tables(forModel(configured, checkpoint, requantize, offsetWeights,
        accuracyLevel, head), q8Tables);
  }

  /**
   * The LM-head flags as given: {@code lmHead} null for auto (int8), true (the layers' own
   * mode), false (as the checkpoint has it); {@code blockSize} null for auto. A float
   * checkpoint's quantization folds them into its spec; a GPTQ/AWQ checkpoint's, known only at
   * load, takes them from here ({@link #forModel}).
   */
  public record HeadSetting(Boolean lmHead, Integer blockSize) {

    public static final HeadSetting AUTO = new HeadSetting(null, null);
  }

  /**
   * Checks that a weight with {@code k} inputs can be quantized under this spec.
   *
   * @throws QuantizationException naming the weight, K and the block size
   */
  public void requireDivides(String weight, long k) {
    int blockSize = blockFor(k);
    if (k % blockSize != 0) {
      throw new QuantizationException("cannot quantize " + weight + ": its input dimension K = "
          + k + " is not a multiple of the quantization block size " + blockSize
          + " (choose a block size that divides it, e.g. --quantization-block-size "
          + largestDividingBlock(k) + " or for the LM head --quantization-head-block-size, or"
          + " --quantization none)");
    }
  }

  private static String largestDividingBlock(long k) {
    for (int b = 256; b >= 16; b /= 2) {
      if (k % b == 0) {
        return Integer.toString(b);
      }
    }
    return "(none divides " + k + ")";
  }
}
