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
 * by their tokens ({@link DraftLength}, {@link StepTimes}). Where neither has a draft, a greedy
 * sequence's last two tokens, where they occurred exactly once before, draft what followed them
 * there; failing that, a one-token guess by a shorter key ({@link ShortKeyLookup}) goes into a
 * row its price says is free. While more sequences run than {@link Speculation#maxBatch()},
 * nothing is drafted.
 */
final class Speculator {

  private final Speculation settings;
  private final Optional<DraftSource> first;
  /** Whether the built-in sources are asked too (after {@link #first}). */
  private final boolean builtIn;
  private final Optional<RadixDraftIndex> index;
  private final EngineObserver observer;
  private final StepTimes times = new StepTimes();
  /** Tokens the drafts already chosen for the step being scheduled are expected to add. */
  private double stepExtra;

  /** @param index the prefix cache's draft index; empty with caching off */
  Speculator(Speculation settings, Optional<RadixDraftIndex> index, EngineObserver observer) {
    this(settings, Optional.empty(), true, index, observer);
  }

  /**
   * @param first a source asked before the built-in ones (tests put one here that proposes what
   *     the built-in sources would not, e.g. tokens a constraint forbids)
   * @param builtIn whether the built-in sources are asked at all: false where a test must know
   *     every draft that is verified
   */
  Speculator(Speculation settings, Optional<DraftSource> first, boolean builtIn,
      Optional<RadixDraftIndex> index, EngineObserver observer) {
    this.settings = settings;
    this.first = first;
    this.builtIn = builtIn;
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
    s.draftFrom = s.draftLength;
    // Greedy requests only: on sampled answers the short keys' guesses measured no
    // gain (a Q4_0 file, 10 rounds: 1.028x against 1.056x without them; the earlier 4-15% losses
    // in 3-4 rounds were within the rounds' spread, journal 2026-11-30j section 7)
    if (draft.length == 0 && left > 0 && builtIn && s.request.params().isGreedy()) {
      draft = shortKeyDraft(s, baseRows, baseTokens);
    }
    // the room (a pass over the running sequences) is only asked for a draft that exists: most
    // steps of a sequence whose text does not repeat find none
    if (draft.length > 0) {
      int fits = room.getAsInt();
      if (fits < draft.length) {
        draft = fits <= 0 ? DraftSource.NONE : Arrays.copyOf(draft, fits);
      }
    }
    stepExtra += s.draftFrom.expectedHeld(draft.length);
    return draft;
  }

  /**
   * Where no source found a draft: a one-token guess by a shorter key, but only into a row its own
   * price says is as good as free ({@link ShortKeyLookup}). It keeps its own acceptance, so its
   * misses never shorten the drafts of a copy, and it never probes.
   */
  private int[] shortKeyDraft(Sequence s, int baseRows, double baseTokens) {
    if (settings.priced() && s.oneTokenLength.pricedOnly(times, baseRows, baseTokens) > 0) {
      s.draftFrom = s.oneTokenLength;
      return s.shortKeyLookup.propose(s.tokensArray(), s.length(), 1);
    }
    return DraftSource.NONE;
  }

  /**
   * The first source's draft, else the sequence's own tokens', else the prefix cache's, else, for
   * a greedy request, what followed its last two tokens where they occurred exactly once before
   * ({@link ShortKeyLookup#proposeByUniquePair}): where a quote of its context starts, a token or
   * two before the three-token key finds it. These share the copy's length and acceptance, so the
   * copy a pair starts goes on at the copy's length (a separate length for them held 6% fewer
   * draft tokens on the copier: the copy ran on the pair's short drafts while its own length was
   * still paused, journal 2026-12-03e). Greedy only, as the one-token guesses: the pairs were
   * measured on greedy answers alone.
   */
  private int[] strongDraft(Sequence s, int k) {
    int[] draft = first.isPresent() ? first.get().propose(s.tokensArray(), s.length(), k)
        : DraftSource.NONE;
    if (draft.length == 0 && builtIn) {
      draft = s.promptLookup.propose(s.tokensArray(), s.length(), k);
    }
    if (draft.length == 0 && builtIn && index.isPresent()) {
      draft = index.get().propose(s.request.namespace(), s.tokensArray(), s.length(), k);
    }
    if (draft.length == 0 && builtIn && s.request.params().isGreedy()) {
      draft = s.shortKeyLookup.proposeByUniquePair(s.tokensArray(), s.length(), k);
    }
    return draft;
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
    s.draftFrom.verified(drafted, accepted);
    observer.speculated(drafted, accepted);
  }
}
