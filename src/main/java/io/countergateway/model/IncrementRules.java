package io.countergateway.model;

import io.countergateway.config.GatewayConfig;
import io.countergateway.config.LimitsOptions;
import io.countergateway.config.NamespaceOptions;
import io.vertx.core.json.JsonObject;

import java.math.BigDecimal;
import java.math.BigInteger;

/** The input rules of DESIGN §5, in one place for HTTP and the event bus alike. */
public final class IncrementRules {
  private final GatewayConfig config;
  private final LimitsOptions limits;

  public IncrementRules(GatewayConfig config) {
    this.config = config;
    this.limits = config.getLimits();
  }

  public NamespaceOptions namespace(String type) {
    NamespaceOptions namespace = type == null ? null : config.namespace(type);
    if (namespace == null) {
      throw new ApiError(404, "unknown_namespace", "namespace '" + abbreviate(type) + "' is not declared", "type");
    }
    return namespace;
  }

  public String id(String id) {
    if (id == null || id.isEmpty()) {
      throw ApiError.badRequest("invalid_id", "id", "id is required");
    }
    if (id.length() > limits.getMaxIdLength()) {
      throw ApiError.badRequest("invalid_id", "id", "id must be at most " + limits.getMaxIdLength() + " characters");
    }
    if (!limits.getIdPattern().matcher(id).matches()) {
      throw ApiError.badRequest("invalid_id", "id", "id may only use the characters " + limits.getIdPattern().pattern());
    }
    return id;
  }

  /** A delta given as JSON: a whole number in range and not zero; {@code null} means the default of 1. */
  public long delta(Object raw) {
    if (raw == null) {
      return 1;
    }
    if (!(raw instanceof Number number)) {
      throw ApiError.badRequest("invalid_delta", "delta", "delta must be a whole number");
    }
    if ((number instanceof Double || number instanceof Float) && !Double.isFinite(number.doubleValue())) {
      throw ApiError.badRequest("invalid_delta", "delta", "delta must be a whole number");
    }
    BigDecimal exact = number instanceof BigDecimal b ? b
      : number instanceof BigInteger i ? new BigDecimal(i)
      : (number instanceof Double || number instanceof Float) ? BigDecimal.valueOf(number.doubleValue())
      : BigDecimal.valueOf(number.longValue());
    if (exact.stripTrailingZeros().scale() > 0) {
      throw ApiError.badRequest("invalid_delta", "delta", "delta must be a whole number");
    }
    if (exact.compareTo(BigDecimal.valueOf(limits.getMinDelta())) < 0
      || exact.compareTo(BigDecimal.valueOf(limits.getMaxDelta())) > 0) {
      // before toBigInteger(): 1e999999999 is a short text but a huge integer
      throw ApiError.badRequest("invalid_delta", "delta",
        "delta must be between " + limits.getMinDelta() + " and " + limits.getMaxDelta());
    }
    return delta(exact.toBigInteger());
  }

  /** A delta given as text (query string): same rules. */
  public long deltaText(String text) {
    try {
      return delta(new BigInteger(text.trim()));
    } catch (NumberFormatException e) {
      throw ApiError.badRequest("invalid_delta", "delta", "delta must be a whole number");
    }
  }

  private long delta(BigInteger value) {
    if (value.signum() == 0) {
      throw ApiError.badRequest("invalid_delta", "delta", "delta must not be 0");
    }
    if (value.compareTo(BigInteger.valueOf(limits.getMinDelta())) < 0
      || value.compareTo(BigInteger.valueOf(limits.getMaxDelta())) > 0) {
      throw ApiError.badRequest("invalid_delta", "delta",
        "delta must be between " + limits.getMinDelta() + " and " + limits.getMaxDelta());
    }
    return value.longValue();
  }

  /**
   * Add-and-get: {@code return=value} (query) or {@code "return":"value"} (event bus) asks for the counter's value
   * after the commit; absent means no value. Only with ack=commit: before the commit there is no value to read.
   */
  public boolean returnsValue(Object raw, boolean waitsForCommit) {
    if (raw == null) {
      return false;
    }
    if (!"value".equals(raw)) {
      throw ApiError.badRequest("invalid_return", "return", "return must be 'value'");
    }
    if (!waitsForCommit) {
      throw ApiError.badRequest("invalid_return", "return",
        "return=value needs ack=commit: the value is read after the increment commits");
    }
    return true;
  }

  public Increment increment(String type, String id, Object rawDelta) {
    namespace(type);
    return new Increment(new CounterKey(type, id(id)), delta(rawDelta));
  }

  /** An increment given as a JSON object {@code {"type","id","delta"}}; {@code where} prefixes the field names. */
  public Increment increment(JsonObject json, String where) {
    try {
      Object type = json.getValue("type");
      Object id = json.getValue("id");
      if (!(type instanceof String)) {
        throw ApiError.badRequest("invalid_type", "type", "type must be a string naming a declared namespace");
      }
      if (!(id instanceof String)) {
        throw ApiError.badRequest("invalid_id", "id", "id must be a string");
      }
      for (String field : json.fieldNames()) {
        if (!field.equals("type") && !field.equals("id") && !field.equals("delta")) {
          throw ApiError.badRequest("unknown_field", abbreviate(field), "unknown field '" + abbreviate(field) + "'");
        }
      }
      if (json.containsKey("delta") && json.getValue("delta") == null) {
        // absent means 1; an explicit null is refused, as in the body of a single increment
        throw ApiError.badRequest("invalid_delta", "delta", "delta must be a whole number");
      }
      return increment((String) type, (String) id, json.getValue("delta"));
    } catch (ApiError e) {
      if (where.isEmpty()) {
        throw e;
      }
      throw new ApiError(e.status(), e.code(), where + ": " + e.getMessage(), where + "." + e.field());
    }
  }

  static String abbreviate(String text) {
    if (text == null) {
      return "null";
    }
    String shown = text.length() > 64 ? text.substring(0, 64) + "…" : text;
    return shown.replaceAll("[\\p{Cntrl}]", "?");
  }
}
