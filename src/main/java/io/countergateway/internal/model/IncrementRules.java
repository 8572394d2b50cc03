package io.countergateway.internal.model;

import io.countergateway.config.GatewayConfig;
import io.countergateway.config.LimitsOptions;
import io.countergateway.config.NamespaceOptions;
import io.countergateway.config.WindowOptions;
import io.vertx.core.json.JsonObject;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Clock;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;

/** The input rules of the API contract (src/DESIGN.md §5), in one place for HTTP and the event bus alike. */
public final class IncrementRules {
  private final GatewayConfig config;
  private final LimitsOptions limits;
  private final Clock clock;
  private final IdCharacters idCharacters;

  /** {@code clock}: the gateway's UTC clock, which puts windowed increments into their bucket. */
  public IncrementRules(GatewayConfig config, Clock clock) {
    this.config = config;
    this.limits = config.getLimits();
    this.idCharacters = IdCharacters.of(limits.getIdPattern());
    this.clock = clock;
  }

  public Clock clock() {
    return clock;
  }

  public NamespaceOptions namespace(String type) {
    NamespaceOptions namespace = type == null ? null : config.namespace(type);
    if (namespace == null) {
      String name = abbreviate(type);
      throw new ApiError(404, "unknown_namespace", "namespace '" + name + "' is not declared: namespaces are declared in "
        + "the configuration file, under namespaces (namespaces." + name + ".slots: 8 declares this one)", "type");
    }
    return namespace;
  }

  /**
   * The namespace of a beacon: declared and {@code public}, or declared and {@code authorized} (a token with the
   * {@code beacon} right). An anonymous beacon on a namespace that is not public gets the very answer an undeclared
   * one gets, so that the beacon route, open to anyone, does not tell which namespaces exist.
   */
  public NamespaceOptions beaconNamespace(String type, boolean authorized) {
    NamespaceOptions namespace = type == null ? null : config.namespace(type);
    if (namespace == null || !namespace.isPublic() && !authorized) {
      String name = abbreviate(type);
      throw new ApiError(404, "unknown_namespace", "no namespace '" + name + "' takes beacons: beacons count on namespaces "
        + "declared public in the configuration file (namespaces." + name + ".public: true)", "type");
    }
    return writable(namespace);
  }

  /**
   * {@code namespace}, unless it is a companion: those the gateway writes from their namespace's beacons, and a client's
   * own increment there would make the sources disagree with the views they break down.
   */
  private static NamespaceOptions writable(NamespaceOptions namespace) {
    if (namespace.isCompanion()) {
      throw new ApiError(403, "companion_namespace", "'" + namespace.getName() + "' is counted by the gateway from the "
        + "beacons of '" + namespace.getParent().getName() + "': it can be read, not written", "type");
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
    if (!idCharacters.matches(id)) {
      throw ApiError.badRequest("invalid_id", "id", "id may only use the characters " + limits.getIdPattern().pattern());
    }
    return id;
  }

  /**
   * An id of {@code namespace}: its own {@code idPattern} and {@code maxIdLength} where it sets them (a public
   * namespace's ids are whatever the internet sends), else the limits'.
   */
  public String id(NamespaceOptions namespace, String id) {
    Integer maxLength = namespace.getMaxIdLength();
    java.util.regex.Pattern pattern = namespace.getIdPattern();
    if (maxLength == null && pattern == null) {
      return id(id);
    }
    int most = maxLength == null ? limits.getMaxIdLength() : maxLength;
    if (id == null || id.isEmpty()) {
      throw ApiError.badRequest("invalid_id", "id", "id is required");
    }
    if (id.length() > most) {
      throw ApiError.badRequest("invalid_id", "id", "id must be at most " + most + " characters (namespaces."
        + namespace.getName() + ")");
    }
    if (pattern == null ? !idCharacters.matches(id) : !pattern.matcher(id).matches()) {
      throw ApiError.badRequest("invalid_id", "id", "id must match " + (pattern == null ? limits.getIdPattern() : pattern)
        .pattern() + " (namespaces." + namespace.getName() + ")");
    }
    return id;
  }

  /**
   * A delta given as JSON: a whole number in range; {@code null} means the default of 1. A delta of 0 is taken and
   * changes nothing (answered like any other), so that one zero in a batch of computed deltas does not refuse the batch.
   */
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
    return increment(type, id, rawDelta, null);
  }

  /**
   * {@code rawAt}: an explicit ISO-8601 instant for a windowed namespace, inside the retention and at most
   * {@code window.maxFutureSkew} ahead; null means now, by the gateway's clock.
   */
  public Increment increment(String type, String id, Object rawDelta, Object rawAt) {
    NamespaceOptions namespace = writable(namespace(type));
    String checkedId = id(namespace, id);
    long delta = delta(rawDelta);
    return new Increment(new CounterKey(type, checkedId, bucket(namespace, rawAt)), delta);
  }

  /**
   * A beacon's increment: delta 1, always at the gateway's clock; {@code id} already a page id of the namespace
   * ({@link #pageId}) or one of its reserved ids.
   */
  public Increment beacon(NamespaceOptions namespace, String id) {
    return new Increment(new CounterKey(namespace.getName(), id, bucket(namespace, null)), 1);
  }

  /**
   * The id a beacon for the page {@code path} (decoded, null when not UTF-8) counts under: a page id
   * ({@link PageIds}) within the namespace's stored length, matching the namespace's own {@code idPattern} where it
   * sets one; null when it cannot be one (the beacon is then counted under the namespace's {@code (invalid)} id).
   * {@code limits.idPattern} is the JSON API's rule, not a page's: a site's paths are whatever its pages are called.
   */
  public String pageId(NamespaceOptions namespace, String path) {
    String text = PageIds.text(path);
    java.util.regex.Pattern pattern = namespace.getIdPattern();
    if (text == null || pattern != null && !pattern.matcher(text).matches()) {
      return null;
    }
    return PageIds.fit(text, storedIdLength(namespace));
  }

  /**
   * The id a read or reset names: a public namespace's ids are page ids (so {@code /docs/über}, a path shortened when
   * it was counted, and the reserved {@code (other)} and {@code (invalid)} are read as they were counted), and so are a
   * companion's (a referrer host, {@code Chrome}, {@code newsletter / email / spring}); any other
   * namespace's follow {@link #id(NamespaceOptions, String)}.
   */
  public String readId(NamespaceOptions namespace, String id) {
    if (!namespace.isPublic() && !namespace.isCompanion()) {
      return id(namespace, id);
    }
    String pageId = PageIds.of(id, storedIdLength(namespace));
    if (pageId == null) {
      throw ApiError.badRequest("invalid_id", "id", "a page id is 1 to " + PageIds.MAX_CHARS
        + " characters of text without control characters");
    }
    return pageId;
  }

  private int storedIdLength(NamespaceOptions namespace) {
    return namespace.getMaxIdLength() == null ? limits.getMaxIdLength() : namespace.getMaxIdLength();
  }

  private long bucket(NamespaceOptions namespace, Object rawAt) {
    WindowOptions window = namespace.getWindow();
    if (window == null) {
      if (rawAt != null) {
        throw ApiError.badRequest("invalid_at", "at", "at is only taken by windowed namespaces; '"
          + namespace.getName() + "' has no window");
      }
      return CounterKey.PLAIN;
    }
    Instant now = clock.instant();
    if (rawAt == null) {
      return window.bucketOf(now);
    }
    Instant at = instant(rawAt, "at");
    if (at.isAfter(now.plus(window.getMaxFutureSkew()))) {
      throw ApiError.badRequest("invalid_at", "at", "at may be at most " + window.getMaxFutureSkew().toSeconds()
        + " s ahead of the gateway's clock (" + now + ")");
    }
    if (window.bucketOf(at) < window.oldestKept(now)) {
      throw ApiError.badRequest("invalid_at", "at", "at is older than the namespace's retention of "
        + window.getRetention().toDays() + " d");
    }
    return window.bucketOf(at);
  }

  /** An ISO-8601 instant with an offset ({@code 2026-11-22T03:00:00Z}), refused as {@code invalid_<field>}. */
  public static Instant instant(Object raw, String field) {
    if (raw instanceof String text && text.length() <= 64) {
      try {
        return OffsetDateTime.parse(text).toInstant();
      } catch (DateTimeParseException e) {
        // refused below
      }
    }
    throw ApiError.badRequest("invalid_" + field, field, field
      + " must be an ISO-8601 date-time with an offset, e.g. 2026-11-22T03:00:00Z");
  }

  /** Item {@code index} of a batch; errors name it ({@code increments[i]}). */
  public Increment increment(JsonObject json, int index) {
    try {
      return increment(json, "");
    } catch (ApiError e) {
      String where = IncrementBatch.where(index);
      throw new ApiError(e.status(), e.code(), where + ": " + e.getMessage(), where + "." + e.field());
    }
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
        if (!field.equals("type") && !field.equals("id") && !field.equals("delta") && !field.equals("at")) {
          throw ApiError.badRequest("unknown_field", abbreviate(field), "unknown field '" + abbreviate(field) + "'");
        }
      }
      if (json.containsKey("delta") && json.getValue("delta") == null) {
        // absent means 1; an explicit null is refused, as in the body of a single increment
        throw ApiError.badRequest("invalid_delta", "delta", "delta must be a whole number");
      }
      if (json.containsKey("at") && json.getValue("at") == null) {
        throw ApiError.badRequest("invalid_at", "at", "at must be an ISO-8601 date-time with an offset");
      }
      return increment((String) type, (String) id, json.getValue("delta"), json.getValue("at"));
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
