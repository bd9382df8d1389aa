package dev.radixserve.server.engine;

import dev.radixserve.model.sampling.SampledToken.TokenLogprob;
import java.util.List;

/**
 * One sampled token as the API reports it.
 *
 * @param tokenId the token
 * @param logprob its log-probability (NaN when not requested)
 * @param top most likely alternatives, best first (empty when not requested)
 */
public record GeneratedToken(int tokenId, float logprob, List<TokenLogprob> top) {}
