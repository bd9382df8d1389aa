package dev.radixserve.bench;

import java.util.ArrayList;
import java.util.List;

/**
 * The application-shaped workloads: the sharing patterns a prefix cache is built for (a system
 * prompt, growing conversations, few-shot blocks, agent scratchpads), a control without sharing,
 * and a working set larger than the KV pool.
 */
final class ChatWorkloads {

  static final int SYSTEM_PROMPT_TOKENS = 1000;
  static final int USER_MESSAGE_TOKENS = 20;
  static final int TURNS_PER_CONVERSATION = 4;
  static final int OPENING_TOKENS = 48;
  static final int FOLLOW_UP_TOKENS = 24;
  static final int FEW_SHOT_TOKENS = 640;
  static final int QUESTION_TOKENS = 24;
  static final int TOOL_DEFINITION_TOKENS = 384;
  static final int TASK_TOKENS = 32;
  static final int STEPS_PER_AGENT = 6;
  static final int OBSERVATION_TOKENS = 32;
  static final int UNIQUE_PROMPT_TOKENS = 256;
  static final int EVICTION_PREFIXES = 16;
  static final int EVICTION_PREFIX_TOKENS = 512;
  static final int EVICTION_QUESTION_TOKENS = 16;

  private ChatWorkloads() {}

  /**
   * One system prompt of 1,000 tokens (shortened when 1,000 + 20 + max_tokens would exceed the
   * context) followed by a distinct 20-token user message per request; default 32 requests.
   */
  static Workload sharedSystemPrompt(WorkloadParams p) {
    int n = p.requestsOr(32);
    int system = Math.min(SYSTEM_PROMPT_TOKENS, p.maxModelLen() - USER_MESSAGE_TOKENS - p.maxTokens());
    if (system < 1) {
      throw new IllegalArgumentException("shared-system-prompt: max_tokens " + p.maxTokens()
          + " leaves no room for a system prompt in --max-model-len " + p.maxModelLen());
    }
    TokenSource tokens = new TokenSource(p.seed(), "shared-system-prompt");
    int[] systemPrompt = tokens.tokens(system);
    List<int[]> prompts = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      prompts.add(TokenSource.concat(systemPrompt, tokens.tokens(USER_MESSAGE_TOKENS)));
    }
    return Workload.independent("shared-system-prompt", n + " requests: one " + system
        + "-token system prompt + a distinct " + USER_MESSAGE_TOKENS + "-token user message", prompts);
  }

  /**
   * Conversations of 4 turns (the last one shorter when the count does not divide): turn 0 is a
   * 48-token opening; turn t is turn t-1's prompt + a synthetic answer of max_tokens fixed ids +
   * a 24-token follow-up. Default 32 requests = 8 conversations.
   */
  static Workload multiTurn(WorkloadParams p) {
    int n = p.requestsOr(32);
    TokenSource tokens = new TokenSource(p.seed(), "multi-turn");
    List<List<int[]>> conversations = new ArrayList<>();
    for (int remaining = n; remaining > 0; remaining -= TURNS_PER_CONVERSATION) {
      List<int[]> turns = new ArrayList<>();
      int[] prompt = tokens.tokens(OPENING_TOKENS);
      turns.add(prompt);
      for (int t = 1; t < Math.min(TURNS_PER_CONVERSATION, remaining); t++) {
        prompt = TokenSource.concat(
            prompt, tokens.syntheticAnswer(p.maxTokens()), tokens.tokens(FOLLOW_UP_TOKENS));
        turns.add(prompt);
      }
      conversations.add(turns);
    }
    Workload w = Workload.interleaved("multi-turn", n + " requests in " + conversations.size()
        + " conversations of up to " + TURNS_PER_CONVERSATION + " turns: " + OPENING_TOKENS
        + "-token opening, then + " + p.maxTokens() + "-token synthetic answer + "
        + FOLLOW_UP_TOKENS + "-token follow-up per turn", conversations);
    p.requireFits("multi-turn", w.maxPromptLength());
    return w;
  }

  /** One 640-token few-shot block (8 examples of 80 tokens) + a distinct 24-token question; default 32. */
  static Workload fewShot(WorkloadParams p) {
    int n = p.requestsOr(32);
    TokenSource tokens = new TokenSource(p.seed(), "few-shot");
    int[] examples = tokens.tokens(FEW_SHOT_TOKENS);
    List<int[]> prompts = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      prompts.add(TokenSource.concat(examples, tokens.tokens(QUESTION_TOKENS)));
    }
    Workload w = Workload.independent("few-shot", n + " requests: one " + FEW_SHOT_TOKENS
        + "-token few-shot block + a distinct " + QUESTION_TOKENS + "-token question", prompts);
    p.requireFits("few-shot", w.maxPromptLength());
    return w;
  }

  /**
   * Agents of 6 steps sharing one 384-token tool-definition prefix; each agent has its own
   * 32-token task, and step s appends to step s-1's prompt a synthetic action of max_tokens fixed
   * ids + a 32-token observation. Steps of one agent are sequential. Default 24 = 4 agents.
   */
  static Workload agentLoop(WorkloadParams p) {
    int n = p.requestsOr(24);
    TokenSource tokens = new TokenSource(p.seed(), "agent-loop");
    int[] tools = tokens.tokens(TOOL_DEFINITION_TOKENS);
    List<List<int[]>> agents = new ArrayList<>();
    for (int remaining = n; remaining > 0; remaining -= STEPS_PER_AGENT) {
      List<int[]> steps = new ArrayList<>();
      int[] prompt = TokenSource.concat(tools, tokens.tokens(TASK_TOKENS));
      steps.add(prompt);
      for (int s = 1; s < Math.min(STEPS_PER_AGENT, remaining); s++) {
        prompt = TokenSource.concat(
            prompt, tokens.syntheticAnswer(p.maxTokens()), tokens.tokens(OBSERVATION_TOKENS));
        steps.add(prompt);
      }
      agents.add(steps);
    }
    Workload w = Workload.interleaved("agent-loop", n + " requests from " + agents.size()
        + " agents of up to " + STEPS_PER_AGENT + " steps: " + TOOL_DEFINITION_TOKENS
        + "-token shared tool definitions + " + TASK_TOKENS + "-token task, then + "
        + p.maxTokens() + "-token synthetic action + " + OBSERVATION_TOKENS
        + "-token observation per step", agents);
    p.requireFits("agent-loop", w.maxPromptLength());
    return w;
  }

  /** Distinct 256-token prompts, nothing shared: the overhead control. Default 32. */
  static Workload unique(WorkloadParams p) {
    int n = p.requestsOr(32);
    TokenSource tokens = new TokenSource(p.seed(), "unique");
    List<int[]> prompts = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      prompts.add(tokens.tokens(UNIQUE_PROMPT_TOKENS));
    }
    Workload w = Workload.independent("unique",
        n + " requests: distinct " + UNIQUE_PROMPT_TOKENS + "-token prompts, no sharing", prompts);
    p.requireFits("unique", w.maxPromptLength());
    return w;
  }

  /**
   * 16 distinct 512-token documents revisited round-robin (document i % 16 for request i), each
   * with a distinct 16-token question; default 48 requests = 3 rounds. The working set is 8,192
   * prefix tokens = 512 blocks of 16: it assumes a KV pool smaller than that, e.g. a server
   * started with {@code --num-blocks 256} (4,096 tokens). With LRU eviction and round-robin
   * revisits, a pool that small can keep almost nothing from one round to the next.
   */
  static Workload evictionPressure(WorkloadParams p) {
    int n = p.requestsOr(48);
    TokenSource tokens = new TokenSource(p.seed(), "eviction-pressure");
    List<int[]> documents = new ArrayList<>();
    for (int d = 0; d < EVICTION_PREFIXES; d++) {
      documents.add(tokens.tokens(EVICTION_PREFIX_TOKENS));
    }
    List<int[]> prompts = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      prompts.add(TokenSource.concat(
          documents.get(i % EVICTION_PREFIXES), tokens.tokens(EVICTION_QUESTION_TOKENS)));
    }
    Workload w = Workload.independent("eviction-pressure", n + " requests: " + EVICTION_PREFIXES
        + " distinct " + EVICTION_PREFIX_TOKENS + "-token documents revisited round-robin + a "
        + EVICTION_QUESTION_TOKENS + "-token question; working set "
        + EVICTION_PREFIXES * EVICTION_PREFIX_TOKENS
        + " tokens, assumes a smaller KV pool (e.g. --num-blocks 256 at block size 16)", prompts);
    p.requireFits("eviction-pressure", w.maxPromptLength());
    return w;
  }
}
