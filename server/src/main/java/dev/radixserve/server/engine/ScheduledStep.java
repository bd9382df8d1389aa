package dev.radixserve.server.engine;

import dev.radixserve.cache.CacheNamespace;
import dev.radixserve.model.ForwardBatch;
import dev.radixserve.server.spec.DraftSource;
import java.util.ArrayList;
import java.util.List;

/** What one forward computes: for each scheduled sequence, its next {@code tokens} new tokens. */
record ScheduledStep(List<Chunk> chunks) {

  /**
   * @param allLogits the chunk returns a logits row per token (prompt logprobs, drafts), not only
   *     its last
   * @param draft draft tokens verified after the decoded token (speculative decoding): then
   *     {@code tokens} is one more than their number; empty otherwise
   */
  record Chunk(Sequence seq, int tokens, boolean allLogits, int[] draft) {

    /** The next {@code tokens} tokens of {@code seq}, from its current {@code numComputed}. */
    Chunk(Sequence seq, int tokens) {
      this(seq, tokens, seq.needsPromptLogits() && seq.numComputed < seq.promptLen - 1,
          DraftSource.NONE);
    }

    /**
     * {@code seq}'s decode token and the {@code draft} after it, each with its logits row: row
     * i verifies draft token i, the last row gives the token after a fully accepted draft.
     */
    Chunk(Sequence seq, int[] draft) {
      this(seq, 1 + draft.length, true, draft);
    }

    /** The token ids the step computes for this chunk. */
    int[] newTokens() {
      int from = seq.numComputed;
      if (draft.length == 0) {
        return seq.tokenRange(from, from + tokens);
      }
      int[] ids = new int[tokens];
      ids[0] = seq.token(from);
      System.arraycopy(draft, 0, ids, 1, draft.length);
      return ids;
    }

    /** Logits rows the runner returns for this chunk. */
    int rows() {
      return allLogits ? tokens : 1;
    }
  }

  boolean isEmpty() {
    return chunks.isEmpty();
  }

  /** Every chunk decodes one token, with or without a draft after it: no prompt tokens. */
  boolean decodesOnly() {
    return chunks.stream().allMatch(c -> c.tokens() == 1 || c.draft().length > 0);
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
      seqs.add(new ForwardBatch.Seq(c.newTokens(), s.numComputed, s.blockTable(), c.allLogits(),
          CacheNamespace.isLongContext(s.request.namespace())));
      if (s.pendingCopy != null) {
        copies.add(s.pendingCopy.toBlockCopy(s));
      }
    }
    return new ForwardBatch(seqs, copies);
  }
}
