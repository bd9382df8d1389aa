package dev.radixserve.server.engine;

import dev.radixserve.model.ForwardBatch;
import java.util.ArrayList;
import java.util.List;

/** What one forward computes: for each scheduled sequence, its next {@code tokens} new tokens. */
record ScheduledStep(List<Chunk> chunks) {

  record Chunk(Sequence seq, int tokens) {}

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
          s.numComputed, s.blockTable()));
      if (s.pendingCopy != null) {
        copies.add(s.pendingCopy.toBlockCopy(s));
      }
    }
    return new ForwardBatch(seqs, copies);
  }
}
