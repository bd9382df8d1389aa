package dev.radixserve.server.api;

/** A request error with its HTTP status, in OpenAI's error shape. */
public final class ApiException extends RuntimeException {

  private final int status;
  private final String type;
  private final String param;
  private final String code;

  public ApiException(int status, String type, String param, String code, String message) {
    super(message);
    this.status = status;
    this.type = type;
    this.param = param;
    this.code = code;
  }

  public static ApiException badRequest(String param, String message) {
    return new ApiException(400, "invalid_request_error", param, null, message);
  }

  public int status() {
    return status;
  }

  public String type() {
    return type;
  }

  public String param() {
    return param;
  }

  public String code() {
    return code;
  }
}
