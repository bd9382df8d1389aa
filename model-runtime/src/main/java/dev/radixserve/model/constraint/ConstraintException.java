package dev.radixserve.model.constraint;

/**
 * A constraint that cannot be compiled: a schema keyword or regex feature this compiler does not
 * support, or a schema no output can satisfy. The server answers 400 with the message, which
 * names {@link #keyword()}.
 */
public final class ConstraintException extends IllegalArgumentException {

  private final String keyword;

  ConstraintException(String keyword, String message) {
    super(message);
    this.keyword = keyword;
  }

  static ConstraintException unsupported(String keyword, String where) {
    return new ConstraintException(keyword, "unsupported JSON Schema keyword `" + keyword + "`"
        + (where.isEmpty() ? "" : " at " + where));
  }

  /** The keyword or feature at fault. */
  public String keyword() {
    return keyword;
  }
}
