package dev.radixserve.model;

/**
 * What the engine's side of any model family needs to know: how many layers of KV cache, how wide
 * one cached token row is, how long a sequence may get and how many logits a step returns. The
 * runner, the KV pool and the server see only this; each family's config implements it.
 */
public interface ModelShape {

  /** Decoder blocks: one key and one value cache tensor each. */
  int nLayer();

  /** Key/value heads per cached token (the attention's query heads may be more: GQA). */
  int kvHeads();

  /** Width of the residual stream: the K of the LM head. */
  int hiddenSize();

  /** Width of one head. */
  int headDim();

  /** Longest sequence the model's positions cover. */
  int nPositions();

  /** Width of the logits (rows of the embedding; may pad the tokenizer's vocabulary). */
  int vocabSize();

  /**
   * The prompt length past which a sequence runs in the model's long context (Phi-3's longrope):
   * its positions are offset by {@link #nPositions} into the rotary tables' long rows ({@code
   * ForwardBatch.Seq#longContext}), and its blocks live in a cache namespace of their own, since
   * its keys are rotated otherwise. {@link Integer#MAX_VALUE} (the default): no long context.
   */
  default int longContextFrom() {
    return Integer.MAX_VALUE;
  }

  /** Floats of one cached token row of one layer, keys or values. */
  default int kvWidth() {
    return kvHeads() * headDim();
  }
}
