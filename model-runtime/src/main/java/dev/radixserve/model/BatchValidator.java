package dev.radixserve.model;

import java.util.List;

/** Rejects batches the graph cannot run, with the numbers, before anything is touched. */
final class BatchValidator {

  private BatchValidator() {}

  static void check(ForwardBatch batch, ModelShape config, int blockSize, int numBlocks) {
    List<ForwardBatch.Seq> seqs = batch.seqs();
    for (int i = 0; i < seqs.size(); i++) {
      ForwardBatch.Seq s = seqs.get(i);
      int total = s.totalLen();
      if (total > config.nPositions()) {
        throw new IllegalArgumentException("sequence " + i + ": position " + (total - 1)
            + " >= n_positions " + config.nPositions());
      }
      if (s.longContext() && config.longContextFrom() == Integer.MAX_VALUE) {
        throw new IllegalArgumentException("sequence " + i + ": long context, but the model has"
            + " none");
      }
      int needed = (total + blockSize - 1) / blockSize;
      int[] table = s.blockTable();
      if (table.length < needed) {
        throw new IllegalArgumentException("sequence " + i + ": block table has " + table.length
            + " blocks, " + needed + " needed for " + total + " tokens of block size " + blockSize);
      }
      for (int b = 0; b < needed; b++) {
        if (table[b] < 0 || table[b] >= numBlocks) {
          throw new IllegalArgumentException("sequence " + i + ": block id " + table[b]
              + " at table index " + b + " outside [0, " + numBlocks + ")");
        }
      }
      for (int tok : s.newTokens()) {
        if (tok < 0 || tok >= config.vocabSize()) {
          throw new IllegalArgumentException(
              "sequence " + i + ": token id " + tok + " outside [0, " + config.vocabSize() + ")");
        }
      }
    }
    List<ForwardBatch.BlockCopy> copies = batch.copies();
    for (int i = 0; i < copies.size(); i++) {
      ForwardBatch.BlockCopy c = copies.get(i);
      if (c.srcBlock() < 0 || c.srcBlock() >= numBlocks || c.dstBlock() < 0
          || c.dstBlock() >= numBlocks) {
        throw new IllegalArgumentException("block copy " + i + ": " + c.srcBlock() + " -> "
            + c.dstBlock() + " outside [0, " + numBlocks + ")");
      }
      if (c.slots() > blockSize) {
        throw new IllegalArgumentException("block copy " + i + ": " + c.slots()
            + " slots > block size " + blockSize);
      }
    }
  }
}
