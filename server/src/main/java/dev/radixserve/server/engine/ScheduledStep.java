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

  ForwardBatch toBatch() {
    List<ForwardBatch.Seq> seqs = new ArrayList<>(chunks.size());
    for (Chunk c : chunks) {
      Sequence s = c.seq();
      seqs.add(new ForwardBatch.Seq(s.tokenRange(s.numComputed, s.numComputed + c.tokens()),
          s.numComputed, s.blockTable()));
    }
    return new ForwardBatch(seqs);
  }
}
