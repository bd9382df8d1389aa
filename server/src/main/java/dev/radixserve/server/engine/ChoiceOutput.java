package dev.radixserve.server.engine;

import java.util.List;

/**
 * New output of one choice after an engine step.
 *
 * @param choice index of the choice within its request ({@code 0..n-1})
 * @param textDelta text that became final (held-back text that may start a stop string is
 *     not included yet); the deltas of a choice concatenate to its whole text
 * @param tokens tokens sampled in this step (usually one)
 * @param finishReason null while the choice goes on
 */
public record ChoiceOutput(int choice, String textDelta, List<GeneratedToken> tokens,
    FinishReason finishReason) {}
