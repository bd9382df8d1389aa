package dev.radixserve.server.http;

import com.fasterxml.jackson.databind.node.ArrayNode;
import dev.radixserve.model.Tokenizer;
import dev.radixserve.server.engine.ChoiceOutput;
import dev.radixserve.server.engine.FinishReason;
import dev.radixserve.server.engine.GeneratedToken;
import java.util.List;

/**
 * One choice as its client sees it: the text so far, its logprob entries, its finish reason and
 * how many tokens it was given. Tokens that arrive after a stop string ended it (the engine
 * learns of the stop one step later) are dropped and not counted.
 */
final class ChoiceState {

  /**
   * What one engine output added to the choice: its content ({@code text}) and, with a reasoning
   * parser, its reasoning ({@code ""} when none).
   */
  record Delta(String text, String reasoning, ArrayNode logprobs, String finishReason,
      boolean stoppedByText) {}

  private final ChoiceText text;
  private final LogprobsJson logprobsJson;
  private final StringBuilder whole = new StringBuilder();
  private final StringBuilder wholeReasoning = new StringBuilder();
  private final ReasoningParser reasoning; // null: the text is all content
  private int reasoningTokens;
  private boolean reasoningClosed;
  private final ArrayNode logprobs = Responses.JSON.createArrayNode();
  private final String echo; // the prompt's text (echo): it opens the first delta
  private final int echoLength;
  private boolean started;
  private String finishReason;
  private int tokens;
  private boolean roleSent;

  ChoiceState(Tokenizer tokenizer, StopStrings stops, LogprobsJson logprobsJson, String echo) {
    this(tokenizer, stops, logprobsJson, echo, null, 0);
  }

  /**
   * @param reasoning splits the chat reply into reasoning and content; null for none
   * @param minTokens stop strings count only after this many tokens ({@code min_tokens})
   */
  ChoiceState(Tokenizer tokenizer, StopStrings stops, LogprobsJson logprobsJson, String echo,
      ReasoningParser reasoning, int minTokens) {
    this.reasoning = reasoning;
    this.text = new ChoiceText(tokenizer, stops, minTokens);
    this.logprobsJson = logprobsJson;
    this.echo = echo;
    this.echoLength = echo.length();
  }

  boolean finished() {
    return finishReason != null;
  }

  /**
   * @param promptEntries the prompt's logprob entries (echo with logprobs), given before its first
   *     output; null otherwise
   */
  Delta accept(ChoiceOutput o, boolean withLogprobs, ArrayNode promptEntries) {
    StringBuilder delta = new StringBuilder();
    StringBuilder thought = new StringBuilder();
    ArrayNode lp = Responses.JSON.createArrayNode();
    if (!started) {
      started = true;
      delta.append(echo);
      if (withLogprobs && promptEntries != null) {
        lp.addAll(promptEntries);
      }
    }
    boolean stoppedByText = false;
    List<GeneratedToken> list = o.tokens();
    for (int i = 0; i < list.size() && finishReason == null; i++) {
      GeneratedToken t = list.get(i);
      boolean last = i == list.size() - 1;
      tokens++;
      int offset;
      if (last && o.finishReason() == FinishReason.STOP) {
        offset = text.length(); // EOS or a stop token id: its text is not output
        add(text.finish(), delta, thought);
        finishReason = FinishReason.STOP.wireName();
      } else {
        ChoiceText.Step step = text.add(t.tokenId());
        offset = step.tokenOffset();
        add(step.delta(), delta, thought);
        if (step.stopped()) {
          finishReason = FinishReason.STOP.wireName();
          stoppedByText = true;
        } else if (last && o.finishReason() != null) {
          add(text.finish(), delta, thought);
          finishReason = o.finishReason().wireName();
        }
      }
      if (reasoning != null && reasoning.reasoned() && !reasoningClosed) {
        reasoningTokens = tokens; // the reasoning's tokens, its tags and the one that closed it
        reasoningClosed = reasoning.closed();
      }
      if (withLogprobs) {
        // with echo, offsets count from the start of the prompt's text (OpenAI's legacy API)
        lp.add(logprobsJson.entry(t, echoLength + offset));
      }
    }
    if (list.isEmpty() && o.finishReason() != null && finishReason == null) {
      add(text.finish(), delta, thought); // max_tokens 0: the choice is its prompt
      finishReason = o.finishReason().wireName();
    }
    if (reasoning != null && finishReason != null) {
      ReasoningParser.Split rest = reasoning.finish();
      thought.append(rest.reasoning());
      delta.append(rest.content());
    }
    whole.append(delta);
    wholeReasoning.append(thought);
    logprobs.addAll(lp);
    return new Delta(delta.toString(), thought.toString(), lp, finishReason, stoppedByText);
  }

  /** Text the client gets: content, or through the reasoning parser. */
  private void add(String piece, StringBuilder content, StringBuilder thought) {
    if (reasoning == null) {
      content.append(piece);
      return;
    }
    ReasoningParser.Split split = reasoning.feed(piece);
    thought.append(split.reasoning());
    content.append(split.content());
  }

  /**
   * The reply's content: with a reasoning parser that found reasoning, null when nothing follows
   * it (vLLM's {@code content or None}).
   */
  String content() {
    return reasoning != null && reasoning.reasoned() && whole.isEmpty() ? null
        : whole.toString();
  }

  /** The reply's reasoning; null without a reasoning part (or parser). */
  String reasoning() {
    return reasoning != null && reasoning.reasoned() ? wholeReasoning.toString() : null;
  }

  int reasoningTokens() {
    return reasoningTokens;
  }

  /** True the first time only: a chat stream opens each choice with the assistant role. */
  boolean takeRole() {
    boolean first = !roleSent;
    roleSent = true;
    return first;
  }

  String text() {
    return whole.toString();
  }

  ArrayNode logprobs() {
    return logprobs;
  }

  String finishReason() {
    return finishReason;
  }

  int tokens() {
    return tokens;
  }
}
