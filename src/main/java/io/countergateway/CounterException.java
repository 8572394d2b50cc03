package io.countergateway;

import io.countergateway.internal.model.ApiError;

/**
 * A request the gateway refused or could not answer, as its HTTP API would say it: the status, a stable machine code
 * ({@code invalid_delta}, {@code unknown_namespace}, {@code outcome_unknown}, {@code timeout} …), a sentence, and the
 * field at fault when there is one. {@link CounterClient} and {@link InTransactionCounters} fail with it.
 */
public final class CounterException extends RuntimeException {
  private final int status;
  private final String code;
  private final String field;

  public CounterException(int status, String code, String message, String field) {
    super(message, null, false, false);
    this.status = status;
    this.code = code;
    this.field = field;
  }

  /** The HTTP status the same refusal gets on the HTTP API (400, 404, 503, 504 …). */
  public int status() {
    return status;
  }

  public String code() {
    return code;
  }

  /** The field at fault ({@code delta}, {@code increments[3].delta}), or null. */
  public String field() {
    return field;
  }

  /** The gateway's own refusal as this type; any other failure (a database's, the caller's SQL) unchanged. */
  static Throwable from(Throwable failure) {
    return failure instanceof ApiError error
      ? new CounterException(error.status(), error.code(), error.getMessage(), error.field()) : failure;
  }
}
