package dev.radixserve.server.engine;

import dev.radixserve.cache.CacheNamespace;
import dev.radixserve.model.ForwardBatch;
import java.util.ArrayList;
import java.util.List;

/** What one forward computes: for each scheduled sequence, its next {@code tokens} new tokens. */
record ScheduledStep(List<Chunk> chunks) {

  /**
   * @param allLogits the chunk returns a logits row per token (prompt logprobs), not only its last
   */
  record Chunk(Sequence seq, int tokens, boolean allLogits) {

    /** The next {@code tokens} tokens of {@code seq}, from its current {@code numComputed}. */
    Chunk(Sequence seq, int tokens) {
      this(seq, tokens, seq.needsPromptLogits() && seq.numComputed < seq.promptLen - 1);
    }

    /** Logits rows the runner returns for this chunk. */
    int rows() {
      return allLogits ? tokens : 1;
    }
  }

  boolean isEmpty() {
    return chunks.isEmpty();
  }

  int totalTokens() {
    return chunks.stream().mapToInt(Chunk::tokens).sum();
  }

  /** The runner's batch: each chunk's new tokens, and the copies that start sequences. */
  ForwardBatch toBatch() {
    List<ForwardBatch.Seq> seqs = new ArrayList<>(chunks.size());
    List<ForwardBatch.BlockCopy> copies = new ArrayList<>();
    for (Chunk c : chunks) {
      Sequence s = c.seq();
      seqs.add(new ForwardBatch.Seq(s.tokenRange(s.numComputed, s.numComputed + c.tokens()),
          s.numComputed, s.blockTable(), c.allLogits(),
          CacheNamespace.isLongContext(s.request.namespace())));
      if (s.pendingCopy != null) {
        copies.add(s.pendingCopy.toBlockCopy(s));
      }
    }
    return new ForwardBatch(seqs, copies);
  }
}
