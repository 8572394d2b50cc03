package io.countergateway.internal.model;

import io.vertx.core.json.JsonObject;

/**
 * A refusal the client can act on: an HTTP status, a stable machine code, a sentence, and the field at fault.
 * Thrown by validation and by back-pressure, rendered as {@code {"error","message","field"}}.
 */
public class ApiError extends RuntimeException {
  private final int status;
  private final String code;
  private final String field;

  public ApiError(int status, String code, String message, String field) {
    super(message, null, false, false);
    this.status = status;
    this.code = code;
    this.field = field;
  }

  public static ApiError badRequest(String code, String field, String message) {
    return new ApiError(400, code, message, field);
  }

  public static ApiError unavailable(String code, String message) {
    return new ApiError(503, code, message, null);
  }

  public int status() {
    return status;
  }

  public String code() {
    return code;
  }

  public String field() {
    return field;
  }

  public JsonObject toJson() {
    JsonObject json = new JsonObject().put("error", code).put("message", getMessage());
    if (field != null) {
      json.put("field", field);
    }
    return json;
  }

  /** Rebuilds an error carried across the event bus as JSON text. */
  public static ApiError fromJson(int status, JsonObject json) {
    return new ApiError(status, json.getString("error", "error"), json.getString("message", ""), json.getString("field"));
  }
}
