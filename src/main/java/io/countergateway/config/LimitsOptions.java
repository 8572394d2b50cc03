package io.countergateway.config;

import java.util.regex.Pattern;

import static io.countergateway.config.ConfigKey.INT;
import static io.countergateway.config.ConfigKey.LONG;
import static io.countergateway.config.ConfigKey.STRING;
import static io.countergateway.config.ConfigKey.between;
import static io.countergateway.config.ConfigKey.regex;

/** What the gateway accepts from clients; everything outside these limits gets a 4xx and is not written. */
public final class LimitsOptions {
  static final ConfigDef KEYS = ConfigDef.section("limits");
  public static final ConfigKey<Integer> MAX_BODY_BYTES = KEYS.define("maxBodyBytes", INT, 1_048_576,
    between(64, 64 * 1024 * 1024), "largest request body (413 above)");
  /** At most 255: the record_id column's width. */
  public static final ConfigKey<Integer> MAX_ID_LENGTH = KEYS.define("maxIdLength", INT, 255, between(1, 255),
    "longest counter id (the `record_id` column's width)");
  /**
   * Letters, digits and a few URL-safe punctuation marks: enough for paths and composite ids like {@code repo:42}.
   * A constant expression, so tests can name it in annotations.
   */
  public static final String DEFAULT_ID_PATTERN = "[A-Za-z0-9._~:/@+=!,-]+";
  public static final ConfigKey<String> ID_PATTERN = KEYS.define("idPattern", STRING, DEFAULT_ID_PATTERN, regex(),
    "what a counter id may look like");
  public static final ConfigKey<Long> MIN_DELTA = KEYS.define("minDelta", LONG, -1_000_000L,
    between(-1_000_000_000_000L, 1_000_000_000_000L), "smallest delta of one increment; at most `maxDelta`");
  public static final ConfigKey<Long> MAX_DELTA = KEYS.define("maxDelta", LONG, 1_000_000L,
    between(-1_000_000_000_000L, 1_000_000_000_000L), "largest delta of one increment");
  public static final ConfigKey<Integer> MAX_BATCH_INCREMENTS = KEYS.define("maxBatchIncrements", INT, 10_000,
    between(1, 1_000_000), "increments in one batch request");
  public static final ConfigKey<Integer> REQUEST_TIMEOUT_MS = KEYS.define("requestTimeoutMs", INT, 10_000,
    between(10, 600_000), "how long a committing request waits before 503 (withdrawn) or 504 (outcome unknown)");
  public static final ConfigKey<Integer> MAX_READ_IDS = KEYS.define("maxReadIds", INT, 1_000, between(1, 100_000),
    "ids in one multi-counter read");
  /** All request headers together; the request line may be half as long. */
  public static final ConfigKey<Integer> MAX_HEADER_BYTES = KEYS.define("maxHeaderBytes", INT, 8_192,
    between(1_024, 1_048_576), "all request headers together (431 above; the request line may be half as long, 414)");
  /** So that half-sent requests cannot hold connections forever. */
  public static final ConfigKey<Integer> IDLE_TIMEOUT_SECONDS = KEYS.define("idleTimeoutSeconds", INT, 60,
    between(1, 3_600), "a connection that sends nothing for this long is closed");
  /** Bytes of request bodies held in memory at once by the whole gateway (nginx has no such cap; Envoy's overload manager does). */
  public static final ConfigKey<Integer> MAX_BODY_BYTES_IN_FLIGHT = KEYS.define("maxBodyBytesInFlight", INT, 33_554_432,
    between(65_536, 1_073_741_824), "request body bytes held in memory by the whole gateway at once (503 + close above)");
  /** nginx {@code client_body_timeout}, for the whole body rather than between two reads. */
  public static final ConfigKey<Integer> BODY_TIMEOUT_MS = KEYS.define("bodyTimeoutMs", INT, 10_000,
    between(100, 600_000), "a request body must arrive whole within this long of its headers (408 + close)");
  /** nginx {@code client_header_timeout}; it is also how long a kept-alive connection may wait for its next request. */
  public static final ConfigKey<Integer> HEADER_TIMEOUT_MS = KEYS.define("headerTimeoutMs", INT, 10_000,
    between(100, 600_000), "a connection with no request in progress must send whole request headers within this long");
  /**
   * nginx {@code limit_conn}, Envoy's {@code max_downstream_connections}; keep it below the open-files limit. ~8 KB of
   * heap each (config.MemoryBudget): 4,000 take ~33 MB, what fits the heap of conf/jvm.options beside the other
   * bounds; more replicas, not more connections per replica, is how the gateway scales.
   */
  public static final ConfigKey<Integer> MAX_CONNECTIONS = KEYS.define("maxConnections", INT, 4_000,
    between(1, 10_000_000), "open client connections of the whole gateway (more are closed at accept)");
  public static final ConfigKey<Integer> MAX_CONNECTIONS_PER_CLIENT = KEYS.define("maxConnectionsPerClient", INT, 512,
    between(1, 10_000_000), "open connections from one client address (more are closed at accept); not for `http.trustedProxies`");

  private final int maxBodyBytes;
  private final int maxIdLength;
  private final Pattern idPattern;
  private final long minDelta;
  private final long maxDelta;
  private final int maxBatchIncrements;
  private final int requestTimeoutMs;
  private final int maxReadIds;
  private final int maxHeaderBytes;
  private final int idleTimeoutSeconds;
  private final int maxBodyBytesInFlight;
  private final int bodyTimeoutMs;
  private final int headerTimeoutMs;
  private final int maxConnections;
  private final int maxConnectionsPerClient;

  private LimitsOptions(ConfigSection section) {
    maxBodyBytes = section.get(MAX_BODY_BYTES);
    maxIdLength = section.get(MAX_ID_LENGTH);
    idPattern = Pattern.compile(section.get(ID_PATTERN));
    minDelta = section.get(MIN_DELTA);
    maxDelta = section.get(MAX_DELTA);
    maxBatchIncrements = section.get(MAX_BATCH_INCREMENTS);
    requestTimeoutMs = section.get(REQUEST_TIMEOUT_MS);
    maxReadIds = section.get(MAX_READ_IDS);
    maxHeaderBytes = section.get(MAX_HEADER_BYTES);
    idleTimeoutSeconds = section.get(IDLE_TIMEOUT_SECONDS);
    maxBodyBytesInFlight = section.get(MAX_BODY_BYTES_IN_FLIGHT);
    bodyTimeoutMs = section.get(BODY_TIMEOUT_MS);
    headerTimeoutMs = section.get(HEADER_TIMEOUT_MS);
    maxConnections = section.get(MAX_CONNECTIONS);
    maxConnectionsPerClient = section.get(MAX_CONNECTIONS_PER_CLIENT);
  }

  static LimitsOptions from(ConfigSection section) {
    LimitsOptions options = new LimitsOptions(section);
    if (options.minDelta > options.maxDelta) {
      throw new ConfigException(section.key(MIN_DELTA), "must not exceed " + section.key(MAX_DELTA)
        + " (" + options.maxDelta + ")");
    }
    return options;
  }

  public int getMaxBodyBytes() {
    return maxBodyBytes;
  }

  public int getMaxIdLength() {
    return maxIdLength;
  }

  public Pattern getIdPattern() {
    return idPattern;
  }

  public long getMinDelta() {
    return minDelta;
  }

  public long getMaxDelta() {
    return maxDelta;
  }

  public int getMaxBatchIncrements() {
    return maxBatchIncrements;
  }

  /** How long a committing request waits before it is answered 503 (withdrawn) or 504 (outcome unknown). */
  public int getRequestTimeoutMs() {
    return requestTimeoutMs;
  }

  public int getMaxReadIds() {
    return maxReadIds;
  }

  /** All request headers together; the request line may be half as long. Larger requests get 431 / 414. */
  public int getMaxHeaderBytes() {
    return maxHeaderBytes;
  }

  /** A connection that sends nothing for this long is closed, so half-sent requests cannot hold connections forever. */
  public int getIdleTimeoutSeconds() {
    return idleTimeoutSeconds;
  }

  /** Request body bytes the whole gateway holds in memory at once; a body that would pass it gets 503 and a close. */
  public int getMaxBodyBytesInFlight() {
    return maxBodyBytesInFlight;
  }

  /** How long a request body may take to arrive whole once its headers are in. */
  public int getBodyTimeoutMs() {
    return bodyTimeoutMs;
  }

  /** How long a connection with no request in progress may take to send whole request headers. */
  public int getHeaderTimeoutMs() {
    return headerTimeoutMs;
  }

  public int getMaxConnections() {
    return maxConnections;
  }

  public int getMaxConnectionsPerClient() {
    return maxConnectionsPerClient;
  }
}
