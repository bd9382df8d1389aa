package dev.radixserve.model.chat;

import com.hubspot.jinjava.Jinjava;
import com.hubspot.jinjava.JinjavaConfig;
import com.hubspot.jinjava.el.JinjavaInterpreterResolver;
import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.interpret.RenderResult;
import com.hubspot.jinjava.interpret.TemplateError;
import com.hubspot.jinjava.lib.exptest.ExpTest;
import com.hubspot.jinjava.lib.fn.ELFunctionDefinition;
import java.time.Clock;
import java.time.LocalDate;
import java.time.format.TextStyle;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import jinjava.javax.el.CompositeELResolver;

/**
 * A model's own chat template (Jinja, from {@code tokenizer_config.json}'s {@code chat_template}
 * or {@code chat_template.jinja}) rendered by HubSpot's jinjava as transformers'
 * {@code apply_chat_template} renders it: {@code trim_blocks} and {@code lstrip_blocks}, a single
 * trailing newline of the template dropped (Jinja2's {@code keep_trailing_newline=False}), the
 * variables {@code messages}, {@code add_generation_prompt} (true), {@code bos_token},
 * {@code eos_token}, {@code tools} (null when none are given, as transformers passes None), and
 * the functions {@code raise_exception} and {@code strftime_now}; {@code tojson} is transformers'
 * ({@link PythonJson}). Python str methods and {@code [::-1]} are bridged ({@link PythonStrings}).
 *
 * <p>The rendered text already holds the template's special tokens (BOS and all), so it is
 * tokenized without adding any ({@code Tokenizer.encodeTemplated}), as transformers does.
 */
public final class JinjaChatTemplate implements ChatTemplate {

  private static final String TODAY = "__radixserve_today";

  private static final java.util.regex.Pattern TOOLS = java.util.regex.Pattern.compile("\\btools\\b");

  private final String original;
  private final String source;
  private final String bosToken;
  private final String eosToken;
  private final Clock clock;
  private final Jinjava jinjava;

  /**
   * @param clock the date {@code strftime_now} reads (Llama 3.1+ templates print today's date)
   */
  public JinjaChatTemplate(String source, String bosToken, String eosToken, Clock clock) {
    this.original = source;
    this.source = bridge(source.endsWith("\n") ? source.substring(0, source.length() - 1) : source);
    this.bosToken = bosToken;
    this.eosToken = eosToken;
    this.clock = clock;
    CompositeELResolver resolver = new CompositeELResolver();
    resolver.add(new PythonStrings());
    resolver.add(JinjavaInterpreterResolver.DEFAULT_RESOLVER_READ_ONLY);
    this.jinjava = new Jinjava(JinjavaConfig.newBuilder().withTrimBlocks(true)
        .withLstripBlocks(true).withElResolver(resolver).build());
    jinjava.getGlobalContext().registerFilter(new PythonJson());
    jinjava.getGlobalContext().registerFilter(new PythonItems());
    jinjava.getGlobalContext().registerFilter(new PythonTrim());
    jinjava.getGlobalContext().registerExpTest(new ExpTest() {
      @Override
      public String getName() {
        return "iterable"; // Jinja2's: a str is iterable too (Llama 3.1 tests tool results so)
      }

      @Override
      public boolean evaluate(Object v, JinjavaInterpreter interpreter, Object... args) {
        return v instanceof Iterable<?> || v instanceof Map<?, ?> || v instanceof CharSequence
            || (v != null && v.getClass().isArray());
      }
    });
    try {
      jinjava.registerFunction(new ELFunctionDefinition("", "raise_exception",
          JinjaChatTemplate.class.getDeclaredMethod("raiseException", String.class)));
      jinjava.registerFunction(new ELFunctionDefinition("", "strftime_now",
          JinjaChatTemplate.class.getDeclaredMethod("strftimeNow", String.class)));
    } catch (NoSuchMethodException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * What jinjava parses differently from Jinja2, rewritten to what it parses alike: whitespace
   * control on expression and comment tags ({@code {{-}, {@code -}}}: jinjava honours it on
   * statements only, so every {@code -} marker is applied here, as text), {@code x[::-1]} (no
   * step slicing: {@code (x|reverse|list)}), and a keyword argument whose value is an expression
   * with operators ({@code namespace(i=messages|length - 1)}: parenthesized), and {@code not a
   * == b} (Jinja2: {@code not (a == b)}; jinjava binds {@code not} tighter: parenthesized), and
   * {@code loop.previtem} / {@code loop.nextitem} ({@link LoopNeighbours}).
   */
  static String bridge(String template) {
    String t = template.replaceAll("\\s*\\{([{%#])-", "{$1")
        .replaceAll("-([}%#])\\}\\s*", "$1}");
    t = t.replaceAll("([A-Za-z_][\\w.]*)\\[::-1\\]", "($1|reverse|list)");
    t = t.replaceAll("\\bnot ([\\w.|\\[\\]'\"]+ (?:==|!=) [\\w.'\"]+)", "not ($1)");
    t = LoopNeighbours.rewrite(t);
    return parenthesizeKeywordArguments(t, "namespace(");
  }

  private static String parenthesizeKeywordArguments(String t, String call) {
    StringBuilder out = new StringBuilder();
    int from = 0;
    for (int at = t.indexOf(call); at >= 0; at = t.indexOf(call, from)) {
      int open = at + call.length();
      List<String> args = new ArrayList<>();
      int close = arguments(t, open, args);
      out.append(t, from, open);
      List<String> wrapped = new ArrayList<>();
      for (String arg : args) {
        java.util.regex.Matcher m = KEYWORD.matcher(arg);
        wrapped.add(m.matches() ? m.group(1) + "=(" + m.group(2).strip() + ")" : arg);
      }
      out.append(String.join(",", wrapped)).append(')');
      from = close + 1;
    }
    return out.append(t.substring(from)).toString();
  }

  private static final java.util.regex.Pattern KEYWORD =
      java.util.regex.Pattern.compile("^(\\s*\\w+\\s*)=(?!=)(.*)$", java.util.regex.Pattern.DOTALL);

  /**
   * Splits the arguments of a call starting at {@code open} at its top-level commas (quotes and
   * brackets respected) into {@code args}; returns the index of the closing ')'.
   */
  private static int arguments(String t, int open, List<String> args) {
    int depth = 0;
    char quote = 0;
    int start = open;
    for (int i = open; i < t.length(); i++) {
      char c = t.charAt(i);
      if (quote != 0) {
        quote = c == quote ? 0 : quote;
      } else if (c == '\'' || c == '"') {
        quote = c;
      } else if (c == '(' || c == '[' || c == '{') {
        depth++;
      } else if ((c == ')' || c == ']' || c == '}') && depth > 0) {
        depth--;
      } else if (c == ')') {
        args.add(t.substring(start, i));
        return i;
      } else if (c == ',' && depth == 0) {
        args.add(t.substring(start, i));
        start = i + 1;
      }
    }
    throw new ChatTemplateException("unbalanced parentheses in the chat template");
  }

  @Override
  public String render(List<Message> messages) {
    return render(messages, null);
  }

  @Override
  public String render(List<Message> messages, List<Map<String, Object>> tools) {
    return render(messages, tools, Map.of());
  }

  @Override
  public String render(List<Message> messages, List<Map<String, Object>> tools,
      Map<String, Object> variables) {
    for (String name : variables.keySet()) {
      if (RESERVED_VARIABLES.contains(name) || name.equals(TODAY)) {
        throw new IllegalArgumentException("`" + name + "` is set by the server");
      }
    }
    List<Map<String, Object>> msgs = new ArrayList<>(messages.size());
    for (Message m : messages) {
      // only the keys the client gave: Llama 3.1 tests `'tool_calls' in message`
      Map<String, Object> one = new LinkedHashMap<>();
      one.put("role", m.role());
      one.put("content", m.content());
      if (m.toolCalls() != null) {
        one.put("tool_calls", m.toolCalls());
      }
      if (m.toolCallId() != null) {
        one.put("tool_call_id", m.toolCallId());
      }
      if (m.name() != null) {
        one.put("name", m.name());
      }
      if (m.reasoningContent() != null) {
        one.put("reasoning_content", m.reasoningContent());
      }
      msgs.add(one);
    }
    Map<String, Object> context = new LinkedHashMap<>(variables);
    context.put("messages", msgs);
    context.put("tools", tools);
    context.put("add_generation_prompt", true);
    context.put("bos_token", bosToken);
    context.put("eos_token", eosToken);
    context.put("strftime_now", true); // "strftime_now is defined", as in transformers
    context.put(TODAY, LocalDate.now(clock));
    RenderResult result = jinjava.renderForResult(source, context);
    List<TemplateError> fatal = result.getErrors().stream()
        .filter(e -> e.getSeverity() == TemplateError.ErrorType.FATAL).toList();
    if (!fatal.isEmpty()) {
      // Jinja2 stops at the first error; jinjava carries on and collects them
      throw new ChatTemplateException("the model's chat template refused the messages: "
          + message(fatal.getFirst()));
    }
    return result.getOutput();
  }

  private static String message(TemplateError e) {
    Throwable t = e.getException();
    while (t != null) {
      if (t instanceof Raised r) {
        return r.getMessage();
      }
      t = t.getCause();
    }
    return e.getMessage();
  }

  @Override
  public boolean takesTools() {
    return TOOLS.matcher(original).find();
  }

  @Override
  public String source() {
    return original;
  }

  @Override
  public List<String> stops() {
    return List.of();
  }

  /** The template's own error (e.g. "Conversation roles must alternate user/assistant/..."). */
  static final class Raised extends RuntimeException {
    Raised(String message) {
      super(message);
    }
  }

  public static Object raiseException(String message) {
    throw new Raised(message);
  }

  /** Python's strftime for the directives chat templates use, on the render's date. */
  public static String strftimeNow(String format) {
    LocalDate d = (LocalDate) JinjavaInterpreter.getCurrent().getContext().get(TODAY);
    StringBuilder out = new StringBuilder();
    for (int i = 0; i < format.length(); i++) {
      char c = format.charAt(i);
      if (c != '%' || i + 1 == format.length()) {
        out.append(c);
        continue;
      }
      char f = format.charAt(++i);
      out.append(switch (f) {
        case 'd' -> String.format("%02d", d.getDayOfMonth());
        case 'm' -> String.format("%02d", d.getMonthValue());
        case 'Y' -> Integer.toString(d.getYear());
        case 'y' -> String.format("%02d", d.getYear() % 100);
        case 'b' -> d.getMonth().getDisplayName(TextStyle.SHORT, Locale.US);
        case 'B' -> d.getMonth().getDisplayName(TextStyle.FULL, Locale.US);
        case 'a' -> d.getDayOfWeek().getDisplayName(TextStyle.SHORT, Locale.US);
        case 'A' -> d.getDayOfWeek().getDisplayName(TextStyle.FULL, Locale.US);
        case 'j' -> String.format("%03d", d.getDayOfYear());
        case '%' -> "%";
        default -> "%" + f;
      });
    }
    return out.toString();
  }
}
