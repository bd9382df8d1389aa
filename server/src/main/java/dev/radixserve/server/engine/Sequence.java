package dev.radixserve.server.engine;

import dev.radixserve.model.ForwardBatch;
import dev.radixserve.cache.NodeHandle;
import dev.radixserve.model.constraint.ConstraintState;
import dev.radixserve.model.sampling.Sampler;
import dev.radixserve.server.engine.SequenceBlocks.PrefixHold;
import java.util.Arrays;
import java.util.Set;

/**
 * One choice of one request as the scheduler tracks it.
 *
 * <pre>
 *   tokens:      [ prompt ............ | output ...... ]            length
 *   computed:    [ K/V in the pool ........... ) numComputed        (≤ length)
 *   blockTable:  [ held by `hold` (cache lock / shared) | owned by this sequence ]
 *                  0 .. heldBlocks                       heldBlocks .. tableSize
 * </pre>
 *
 * <p>A sequence that starts inside a block (its cached prefix ends there, or its choices fork
 * from a prompt that does) counts the borrowed tokens as computed and carries a {@link
 * PendingCopy}: its next step copies them from the source block into its own block at {@code
 * tableIndex} before computing. Only then may the source go.
 */
final class Sequence {

  final EngineRequest request;
  final RequestState state;
  final int choice;
  final Sampler sampler;
  final int promptLen;
  /** Where the output stands in the request's constraint; null without one. */
  final ConstraintState guide;
  /** Tokens that may end the constrained output where it is complete (set with the guide). */
  Set<Integer> guideEnds = Set.of();

  private int[] tokens;
  private int length;
  int numComputed;
  /** Length when last admitted: positions below it are prefill, above decode. */
  int prefillEnd;

  private int[] blockTable = new int[8];
  private int tableSize;
  PrefixHold hold;
  int heldBlocks;
  /** Set from the moment the sequence starts inside a block until its next step has run. */
  PendingCopy pendingCopy;
  /** Its load of offloaded blocks while one runs (it waits in line meanwhile). */
  TierLoads.Load load;
  /** After a load: a lock on the cached prefix it extended, until its admission matches it. */
  PrefixHold loadedHold;
  /** The node the last admission's cache match ended at; null with prefix caching off. */
  NodeHandle matchedNode;

  /** Admission order stamp; preemption picks the largest. */
  long admittedSeq;
  int outputTokens;
  long lastTokenNanos;
  /** The prompt is computed and the choices have been forked (choice 0 only). */
  boolean forked;
  /** Speculative decoding: drafts from its own tokens, and how many to verify (set lazily). */
  dev.radixserve.server.spec.PromptLookup promptLookup;
  dev.radixserve.server.spec.DraftLength draftLength;
  /**
   * Drafts by a shorter key (where the last two tokens occurred once before; one-token guesses
   * into a row that costs nothing), and the guesses' own length.
   */
  dev.radixserve.server.spec.ShortKeyLookup shortKeyLookup;
  dev.radixserve.server.spec.DraftLength oneTokenLength;
  /** The length whose rules chose the latest draft: its verification goes there. */
  dev.radixserve.server.spec.DraftLength draftFrom;

  Sequence(EngineRequest request, RequestState state, int choice, Sampler sampler) {
    this.request = request;
    this.state = state;
    this.choice = choice;
    this.sampler = sampler;
    this.promptLen = request.promptTokens().length;
    this.guide = request.constraint() == null ? null : request.constraint().start();
    this.tokens = Arrays.copyOf(request.promptTokens(), promptLen + 16);
    this.length = promptLen;
  }

  int length() {
    return length;
  }

  /**
   * True while this sequence must compute logits at its prompt positions (prompt logprobs not yet
   * delivered): it then matches no cached prefix, and its prompt chunks return every row.
   */
  boolean needsPromptLogits() {
    return choice == 0 && state.promptLogprobs != null;
  }

  int token(int i) {
    return tokens[i];
  }

  /** The backing array; valid in {@code [0, length)}. */
  int[] tokensArray() {
    return tokens;
  }

  int[] tokenRange(int from, int to) {
    return Arrays.copyOfRange(tokens, from, to);
  }

  void append(int token) {
    if (length == tokens.length) {
      tokens = Arrays.copyOf(tokens, length * 2);
    }
    tokens[length++] = token;
  }

  int tableSize() {
    return tableSize;
  }

  int block(int i) {
    return blockTable[i];
  }

  int[] blockTable() {
    return Arrays.copyOf(blockTable, tableSize);
  }

  void appendBlocks(int[] ids) {
    if (tableSize + ids.length > blockTable.length) {
      blockTable = Arrays.copyOf(blockTable, Math.max(blockTable.length * 2, tableSize + ids.length));
    }
    System.arraycopy(ids, 0, blockTable, tableSize, ids.length);
    tableSize += ids.length;
  }

  void replaceBlocks(int[] ids) {
    System.arraycopy(ids, 0, blockTable, 0, ids.length);
  }

  /** Forgets the table's entries from {@code size} on (they were handed over). */
  void truncateBlocks(int size) {
    tableSize = size;
  }

  /** Blocks this sequence owns alone (not covered by its hold). */
  int[] ownedBlocks() {
    return Arrays.copyOfRange(blockTable, heldBlocks, tableSize);
  }

  /** Forgets every block (after they were released or handed over). */
  void clearBlocks() {
    tableSize = 0;
    heldBlocks = 0;
    hold = null;
    numComputed = 0;
  }

  /**
   * Copy-on-write still to do: slots {@code [0, slots)} of {@code sourceBlock} into this
   * sequence's block at {@code tableIndex} (allocated by the time the step runs). {@code
   * sourceHold} keeps the source from being evicted or freed until then.
   */
  record PendingCopy(int sourceBlock, int slots, int tableIndex, PrefixHold sourceHold) {

    ForwardBatch.BlockCopy toBlockCopy(Sequence s) {
      if (tableIndex >= s.tableSize()) {
        throw new IllegalStateException("copy into table index " + tableIndex + " of " + s
            + ", which has no block there yet");
      }
      return new ForwardBatch.BlockCopy(sourceBlock, s.block(tableIndex), slots);
    }
  }

  @Override
  public String toString() {
    return request.id() + "#" + choice + "(len " + length + ", computed " + numComputed
        + ", blocks " + tableSize + ")";
  }
}
