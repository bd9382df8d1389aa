package dev.radixserve.server.engine;

import dev.radixserve.server.spec.DraftLength;
import dev.radixserve.server.spec.DraftSource;
import dev.radixserve.server.spec.PromptLookup;
import dev.radixserve.server.spec.RadixDraftIndex;
import dev.radixserve.server.spec.ShortKeyLookup;
import dev.radixserve.server.spec.Speculation;
import dev.radixserve.server.spec.StepTimes;
import java.util.Arrays;
import java.util.Optional;
import java.util.function.IntSupplier;

/**
 * Picks each decoding sequence's draft tokens for the scheduler and learns from how they were
 * verified (speculative decoding; the verification itself is {@link OutputProcessor}'s). Drafts
 * come from the sequence's own tokens first, then from the prefix cache's token runs in its
 * namespace; how many follows the sequence's recent acceptance and what the engine's steps took
 * by their tokens ({@link DraftLength}, {@link StepTimes}). Where neither has a draft, a
 * one-token guess by a shorter key ({@link ShortKeyLookup}) goes into a row its price says is
 * free. While more sequences run than {@link Speculation#maxBatch()}, nothing is drafted.
 */
final class Speculator {

  private final Speculation settings;
  private final Optional<DraftSource> first;
  private final Optional<RadixDraftIndex> index;
  private final EngineObserver observer;
  private final StepTimes times = new StepTimes();
  /** Tokens the drafts already chosen for the step being scheduled are expected to add. */
  private double stepExtra;

  /** @param index the prefix cache's draft index; empty with caching off */
  Speculator(Speculation settings, Optional<RadixDraftIndex> index, EngineObserver observer) {
    this(settings, Optional.empty(), index, observer);
  }

  /**
   * @param first a source asked before the sequence's own tokens and the cache (tests put one
   *     here that proposes what the built-in sources would not, e.g. tokens a constraint forbids)
   */
  Speculator(Speculation settings, Optional<DraftSource> first, Optional<RadixDraftIndex> index,
      EngineObserver observer) {
    this.settings = settings;
    this.first = first;
    this.index = index;
    this.observer = observer;
  }

  /**
   * Draft tokens for {@code s}'s next step, which decodes one token, or none.
   *
   * @param running sequences running now
   * @param baseRows tokens the step computes so far and at least one for each running sequence
   *     not yet scheduled, {@code s}'s one among them (what its draft would be priced against)
   * @param room most positions the step may add beyond the decoded token (token budget, free
   *     blocks); asked only when {@code s} may draft
   */
  int[] draft(Sequence s, int running, int baseRows, IntSupplier room) {
    // a pure decode: one token left, and it is not the last of a (re)computed prefill
    if (!settings.enabled() || running > settings.maxBatch()
        || s.length() - s.numComputed != 1 || s.numComputed < s.prefillEnd) {
      return DraftSource.NONE;
    }
    if (s.draftLength == null) {
      s.draftLength = new DraftLength(settings.maxTokens());
      s.promptLookup = new PromptLookup();
      s.oneTokenLength = new DraftLength(1);
      s.shortKeyLookup = new ShortKeyLookup();
    }
    // the step's yield without this draft: a token for each running sequence (those still
    // prefilling yield none, so this errs towards shorter drafts) and what the drafts chosen
    // before it are expected to add
    double baseTokens = running + stepExtra;
    int wanted = settings.priced() ? s.draftLength.next(times, baseRows, baseTokens)
        : s.draftLength.next();
    // the step yields one token more than it accepts: nothing is drafted past max_tokens (and
    // so past the model's length, which validation keeps max_tokens within)
    int left = s.request.maxTokens() - s.outputTokens - 1;
    int k = Math.min(wanted, left);
    int[] draft = k > 0 ? strongDraft(s, k) : DraftSource.NONE;
    s.draftByShortKey = false;
    // where the sequence's own sources found nothing, a one-token guess by a shorter key, but
    // only into a row its own price says is as good as free (ShortKeyLookup): it keeps its own
    // acceptance, so its misses never shorten the drafts of a copy, and it never probes. Greedy
    // requests only: on sampled answers they measured no gain (a Q4_0 file, 10 rounds: 1.028x
    // against 1.056x without them; the earlier 4-15% losses in 3-4 rounds were within the
    // rounds' spread, journal 2026-11-30j section 7)
    if (draft.length == 0 && left > 0 && settings.priced() && s.request.params().isGreedy()
        && s.oneTokenLength.pricedOnly(times, baseRows, baseTokens) > 0) {
      draft = s.shortKeyLookup.propose(s.tokensArray(), s.length(), 1);
      s.draftByShortKey = draft.length > 0;
    }
    // the room (a pass over the running sequences) is only asked for a draft that exists: most
    // steps of a sequence whose text does not repeat find none
    if (draft.length > 0) {
      int fits = room.getAsInt();
      if (fits < draft.length) {
        draft = fits <= 0 ? DraftSource.NONE : Arrays.copyOf(draft, fits);
      }
    }
    stepExtra += lengthOf(s).expectedHeld(draft.length);
    return draft;
  }

  /** The first source's draft, else the sequence's own tokens', else the prefix cache's. */
  private int[] strongDraft(Sequence s, int k) {
    int[] draft = first.isPresent() ? first.get().propose(s.tokensArray(), s.length(), k)
        : DraftSource.NONE;
    if (draft.length == 0) {
      draft = s.promptLookup.propose(s.tokensArray(), s.length(), k);
    }
    if (draft.length == 0 && index.isPresent()) {
      draft = index.get().propose(s.request.namespace(), s.tokensArray(), s.length(), k);
    }
    return draft;
  }

  /** The length whose rules chose {@code s}'s latest draft. */
  private static DraftLength lengthOf(Sequence s) {
    return s.draftByShortKey ? s.oneTokenLength : s.draftLength;
  }

  /** A new step is being scheduled: no drafts chosen for it yet. */
  void startStep() {
    stepExtra = 0;
  }

  /** A forward step of {@code tokens} tokens took {@code elapsedNanos}: the price of drafts. */
  void stepTook(int tokens, long elapsedNanos) {
    times.record(tokens, elapsedNanos);
  }

  /** The model agreed with the first {@code accepted} of {@code drafted} draft tokens. */
  void verified(Sequence s, int drafted, int accepted) {
    lengthOf(s).verified(drafted, accepted);
    observer.speculated(drafted, accepted);
  }
}
