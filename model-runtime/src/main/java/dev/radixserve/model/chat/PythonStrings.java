package dev.radixserve.model.chat;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.beans.FeatureDescriptor;
import java.util.Iterator;
import jinjava.javax.el.ELContext;
import jinjava.javax.el.ELResolver;

/**
 * Python's str methods that chat templates call ({@code startswith}, {@code endswith},
 * {@code split}, {@code strip}, {@code lstrip}, {@code rstrip}) on Java strings, with Python's
 * semantics (Java's {@code split} takes a regex and drops trailing empty strings; Python's does
 * neither). Other calls fall through to jinjava's own resolver.
 */
final class PythonStrings extends ELResolver {

  private static final Set<String> METHODS =
      Set.of("startswith", "endswith", "split", "strip", "lstrip", "rstrip", "upper", "lower");

  // Only method calls on strings: every property lookup is left to the next resolver.
  @Override
  public Object getValue(ELContext context, Object base, Object property) {
    return null;
  }

  @Override
  public Class<?> getType(ELContext context, Object base, Object property) {
    return null;
  }

  @Override
  public void setValue(ELContext context, Object base, Object property, Object value) {}

  @Override
  public boolean isReadOnly(ELContext context, Object base, Object property) {
    return true;
  }

  @Override
  public Iterator<FeatureDescriptor> getFeatureDescriptors(ELContext context, Object base) {
    return null;
  }

  @Override
  public Class<?> getCommonPropertyType(ELContext context, Object base) {
    return null;
  }

  @Override
  public Object invoke(ELContext context, Object base, Object method, Class<?>[] paramTypes,
      Object[] params) {
    if (!(base instanceof String s) || method == null || !METHODS.contains(method.toString())) {
      return null;
    }
    Object[] p = params == null ? new Object[0] : params;
    String arg = p.length > 0 && p[0] != null ? p[0].toString() : null;
    Object result = switch (method.toString()) {
      case "startswith" -> s.startsWith(arg);
      case "endswith" -> s.endsWith(arg);
      case "split" -> split(s, arg);
      case "strip" -> rstrip(lstrip(s, arg), arg);
      case "lstrip" -> lstrip(s, arg);
      case "rstrip" -> rstrip(s, arg);
      case "upper" -> s.toUpperCase(java.util.Locale.ROOT);
      default -> s.toLowerCase(java.util.Locale.ROOT);
    };
    context.setPropertyResolved(true);
    return result;
  }

  static List<String> split(String s, String sep) {
    List<String> out = new ArrayList<>();
    if (sep == null) {
      for (String part : s.strip().split("\\s+")) {
        if (!part.isEmpty()) {
          out.add(part);
        }
      }
      return out;
    }
    int from = 0;
    for (int at = s.indexOf(sep); at >= 0; at = s.indexOf(sep, from)) {
      out.add(s.substring(from, at));
      from = at + sep.length();
    }
    out.add(s.substring(from));
    return out;
  }

  static String lstrip(String s, String chars) {
    int i = 0;
    while (i < s.length() && strips(s.charAt(i), chars)) {
      i++;
    }
    return s.substring(i);
  }

  static String rstrip(String s, String chars) {
    int i = s.length();
    while (i > 0 && strips(s.charAt(i - 1), chars)) {
      i--;
    }
    return s.substring(0, i);
  }

  private static boolean strips(char c, String chars) {
    return chars == null ? Character.isWhitespace(c) : chars.indexOf(c) >= 0;
  }
}
