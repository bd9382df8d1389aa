package dev.radixserve.server.engine;

import java.util.List;

/**
 * New output of one choice after an engine step: token ids only. Detokenizing and stop strings
 * happen off the engine thread, in the HTTP layer.
 *
 * @param choice index of the choice within its request ({@code 0..n-1})
 * @param tokens tokens sampled in this step (usually one)
 * @param finishReason null while the choice goes on; {@link FinishReason#STOP} means the last
 *     token is EOS or one of the request's stop token ids (its text is not part of the output)
 */
public record ChoiceOutput(int choice, List<GeneratedToken> tokens, FinishReason finishReason) {}
