package dev.radixserve.model.chat;

import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.lib.filter.Filter;
import java.math.BigDecimal;
import java.util.Collection;
import java.util.Map;

/**
 * The {@code tojson} filter as transformers defines it for chat templates: Python's
 * {@code json.dumps(x, ensure_ascii=False, indent=indent)}. jinjava's own {@code tojson} writes
 * compact JSON ({@code {"a":1}}); tool definitions rendered into a prompt must be the bytes the
 * model was trained on ({@code {"a": 1}}, or one key per line with {@code indent=4}).
 */
final class PythonJson implements Filter {

  @Override
  public String getName() {
    return "tojson";
  }

  @Override
  public Object filter(Object var, JinjavaInterpreter interpreter, String... args) {
    return dumps(var, args.length > 0 && args[0] != null ? Integer.parseInt(args[0].strip()) : -1);
  }

  @Override
  public Object filter(Object var, JinjavaInterpreter interpreter, Object[] args,
      Map<String, Object> kwargs) {
    Object indent = kwargs.containsKey("indent") ? kwargs.get("indent")
        : args.length > 0 ? args[0] : null;
    return dumps(var, indent == null ? -1 : ((Number) toNumber(indent)).intValue());
  }

  private static Object toNumber(Object o) {
    return o instanceof Number ? o : Long.parseLong(o.toString().strip());
  }

  /** {@code json.dumps(value, ensure_ascii=False, indent=indent)}; {@code indent < 0}: None. */
  static String dumps(Object value, int indent) {
    StringBuilder out = new StringBuilder();
    write(value, indent, 0, out);
    return out.toString();
  }

  private static void write(Object v, int indent, int depth, StringBuilder out) {
    switch (v) {
      case null -> out.append("null");
      case Boolean b -> out.append(b ? "true" : "false");
      case Double d -> out.append(floatRepr(d));
      case Float f -> out.append(floatRepr(f.doubleValue()));
      case BigDecimal d -> out.append(floatRepr(d.doubleValue()));
      case Number n -> out.append(n);
      case Map<?, ?> m -> container(m.entrySet(), '{', '}', indent, depth, out);
      case Collection<?> c -> container(c, '[', ']', indent, depth, out);
      case Object[] a -> container(java.util.Arrays.asList(a), '[', ']', indent, depth, out);
      default -> string(v.toString(), out);
    }
  }

  private static void container(Collection<?> items, char open, char close, int indent, int depth,
      StringBuilder out) {
    out.append(open);
    if (items.isEmpty()) {
      out.append(close);
      return;
    }
    boolean first = true;
    for (Object item : items) {
      if (!first) {
        out.append(indent < 0 ? ", " : ",");
      }
      first = false;
      if (indent >= 0) {
        out.append('\n').append(" ".repeat(indent * (depth + 1)));
      }
      if (item instanceof Map.Entry<?, ?> e) {
        string(String.valueOf(e.getKey()), out);
        out.append(": ");
        write(e.getValue(), indent, depth + 1, out);
      } else {
        write(item, indent, depth + 1, out);
      }
    }
    if (indent >= 0) {
      out.append('\n').append(" ".repeat(indent * depth));
    }
    out.append(close);
  }

  /** Python's string escaping with ensure_ascii=False: only quotes, backslashes and controls. */
  private static void string(String s, StringBuilder out) {
    out.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        case '\b' -> out.append("\\b");
        case '\f' -> out.append("\\f");
        default -> {
          if (c < 0x20) {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    out.append('"');
  }

  /** Python's float repr: shortest digits, scientific below 1e-4 and from 1e16 on. */
  static String floatRepr(double d) {
    if (Double.isNaN(d)) {
      return "NaN";
    }
    if (Double.isInfinite(d)) {
      return d > 0 ? "Infinity" : "-Infinity";
    }
    if (d == 0) {
      return 1 / d < 0 ? "-0.0" : "0.0";
    }
    BigDecimal b = new BigDecimal(Double.toString(d)).stripTrailingZeros();
    int exp = b.precision() - b.scale() - 1; // the decimal exponent of the first digit
    if (exp < -4 || exp >= 16) {
      String digits = b.unscaledValue().abs().toString();
      String mantissa = digits.length() == 1 ? digits : digits.charAt(0) + "." + digits.substring(1);
      return (d < 0 ? "-" : "") + mantissa + "e" + (exp < 0 ? "-" : "+")
          + String.format("%02d", Math.abs(exp));
    }
    String plain = b.toPlainString();
    return plain.contains(".") ? plain : plain + ".0";
  }
}
