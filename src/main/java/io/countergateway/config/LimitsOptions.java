package io.countergateway.config;

import java.time.Duration;
import java.time.temporal.ChronoUnit;

import java.util.regex.Pattern;

import static io.countergateway.config.ConfigKey.DURATION;
import static io.countergateway.config.ConfigKey.INT;
import static io.countergateway.config.ConfigKey.Importance.LOW;
import static io.countergateway.config.ConfigKey.Importance.MEDIUM;
import static io.countergateway.config.ConfigKey.LONG;
import static io.countergateway.config.ConfigKey.STRING;
import static io.countergateway.config.ConfigKey.between;
import static io.countergateway.config.ConfigKey.regex;

/** What the gateway accepts from clients; everything outside these limits gets a 4xx and is not written. */
public final class LimitsOptions {
  static final ConfigDef KEYS = ConfigDef.section("limits");

  static {
    KEYS.retired("maxBodyBytesInFlight", "derived from the heap (docs/operations.md \"Sizing\")");
  }

  public static final ConfigKey<Integer> MAX_BODY_BYTES = KEYS.define("maxBodyBytes", LOW, INT, 1_048_576,
    between(64, 64 * 1024 * 1024), "largest request body (413 above)");
  /** At most 255: the record_id column's width. */
  public static final ConfigKey<Integer> MAX_ID_LENGTH = KEYS.define("maxIdLength", MEDIUM, INT, 255, between(1, 255),
    "longest counter id (the `record_id` column's width)");
  /**
   * Letters, digits and a few URL-safe punctuation marks: enough for paths and composite ids like {@code repo:42}.
   * A constant expression, so tests can name it in annotations.
   */
  public static final String DEFAULT_ID_PATTERN = "[A-Za-z0-9._~:/@+=!,-]+";
  public static final ConfigKey<String> ID_PATTERN = KEYS.define("idPattern", MEDIUM, STRING, DEFAULT_ID_PATTERN, regex(),
    "what a counter id may look like");
  public static final ConfigKey<Long> MIN_DELTA = KEYS.define("minDelta", MEDIUM, LONG, -1_000_000L,
    between(-1_000_000_000_000L, 1_000_000_000_000L), "smallest delta of one increment; at most `maxDelta`");
  public static final ConfigKey<Long> MAX_DELTA = KEYS.define("maxDelta", MEDIUM, LONG, 1_000_000L,
    between(-1_000_000_000_000L, 1_000_000_000_000L), "largest delta of one increment");
  public static final ConfigKey<Integer> MAX_BATCH_INCREMENTS = KEYS.define("maxBatchIncrements", LOW, INT, 10_000,
    between(1, 1_000_000), "increments in one batch request");
  public static final ConfigKey<Duration> REQUEST_TIMEOUT = KEYS.define("requestTimeout", MEDIUM, DURATION, Duration.ofSeconds(10),
    between(Duration.ofMillis(10), Duration.ofMinutes(10)), "how long a committing request waits before 503 (withdrawn) "
      + "or 504 (outcome unknown)")
    .formerly("requestTimeoutMs", ChronoUnit.MILLIS);
  public static final ConfigKey<Integer> MAX_READ_IDS = KEYS.define("maxReadIds", LOW, INT, 1_000, between(1, 100_000),
    "ids in one multi-counter read");
  /** All request headers together; the request line may be half as long. */
  public static final ConfigKey<Integer> MAX_HEADER_BYTES = KEYS.define("maxHeaderBytes", LOW, INT, 8_192,
    between(1_024, 1_048_576), "all request headers together (431 above; the request line may be half as long, 414)");
  /** So that half-sent requests cannot hold connections forever. */
  public static final ConfigKey<Duration> IDLE_TIMEOUT = KEYS.define("idleTimeout", LOW, DURATION, Duration.ofMinutes(1),
    between(Duration.ofSeconds(1), Duration.ofHours(1)), "a connection that sends nothing for this long is closed")
    .formerly("idleTimeoutSeconds", ChronoUnit.SECONDS);
  /** nginx {@code client_body_timeout}, for the whole body rather than between two reads. */
  public static final ConfigKey<Duration> BODY_TIMEOUT = KEYS.define("bodyTimeout", LOW, DURATION, Duration.ofSeconds(10),
    between(Duration.ofMillis(100), Duration.ofMinutes(10)), "a request body must arrive whole within this long of its "
      + "headers (408 + close)")
    .formerly("bodyTimeoutMs", ChronoUnit.MILLIS);
  /** nginx {@code client_header_timeout}; it is also how long a kept-alive connection may wait for its next request. */
  public static final ConfigKey<Duration> HEADER_TIMEOUT = KEYS.define("headerTimeout", LOW, DURATION, Duration.ofSeconds(10),
    between(Duration.ofMillis(100), Duration.ofMinutes(10)), "a connection with no request in progress must send whole "
      + "request headers within this long")
    .formerly("headerTimeoutMs", ChronoUnit.MILLIS);
  /**
   * nginx {@code limit_conn}, Envoy's {@code max_downstream_connections}. ~8 KB of heap each: unset, the heap's share
   * for connections (config.MemoryBudget); set it to stay below the open-files limit. More replicas, not more
   * connections per replica, is how the gateway scales.
   */
  public static final ConfigKey<Integer> MAX_CONNECTIONS = KEYS.defineDerived("maxConnections", MEDIUM, INT,
    "from the heap", between(1, 10_000_000), "open client connections of the whole gateway (more are closed at "
      + "accept); keep it below the open-files limit (`ulimit -n`); unset: what the heap's share for connections holds "
      + "(see *Sizing*)");
  public static final ConfigKey<Integer> MAX_CONNECTIONS_PER_CLIENT = KEYS.define("maxConnectionsPerClient", LOW, INT, 512,
    between(1, 10_000_000), "open connections from one client (an IPv4 address, an IPv6 /64; more are closed at accept); "
      + "a `http.trustedProxies` peer's are counted against the client its first request forwards");
  /**
   * One party holds many addresses (a tunnel broker's /48 holds 65,536 /64s): every per-client budget is also kept
   * per network, so holding more addresses of one network buys nothing past this (model/ClientNetworks).
   */
  public static final ConfigKey<Integer> CLIENTS_PER_NETWORK = KEYS.define("clientsPerNetwork", LOW, INT, 16,
    between(1, 1_000_000), "how many clients' worth of each per-client limit (connections, beacons, distinct ids, new "
      + "sketches) a network gets: an IPv4 /24 or IPv6 /48 this many, an IPv6 /56 a quarter of it");

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
  private final int bodyTimeoutMs;
  private final int headerTimeoutMs;
  private final Integer maxConnections;
  private final int maxConnectionsPerClient;
  private final int clientsPerNetwork;

  private LimitsOptions(ConfigSection section) {
    maxBodyBytes = section.get(MAX_BODY_BYTES);
    maxIdLength = section.get(MAX_ID_LENGTH);
    idPattern = Pattern.compile(section.get(ID_PATTERN));
    minDelta = section.get(MIN_DELTA);
    maxDelta = section.get(MAX_DELTA);
    maxBatchIncrements = section.get(MAX_BATCH_INCREMENTS);
    requestTimeoutMs = (int) section.get(REQUEST_TIMEOUT).toMillis();
    maxReadIds = section.get(MAX_READ_IDS);
    maxHeaderBytes = section.get(MAX_HEADER_BYTES);
    idleTimeoutSeconds = (int) section.get(IDLE_TIMEOUT).toSeconds();
    bodyTimeoutMs = (int) section.get(BODY_TIMEOUT).toMillis();
    headerTimeoutMs = (int) section.get(HEADER_TIMEOUT).toMillis();
    maxConnections = section.get(MAX_CONNECTIONS, null);
    maxConnectionsPerClient = section.get(MAX_CONNECTIONS_PER_CLIENT);
    clientsPerNetwork = section.get(CLIENTS_PER_NETWORK);
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

  /** How long a request body may take to arrive whole once its headers are in. */
  public int getBodyTimeoutMs() {
    return bodyTimeoutMs;
  }

  /** How long a connection with no request in progress may take to send whole request headers. */
  public int getHeaderTimeoutMs() {
    return headerTimeoutMs;
  }

  /** The configured cap on open connections; null: derived from the heap ({@link GatewayConfig#getMemoryBounds()}). */
  public Integer getMaxConnections() {
    return maxConnections;
  }

  public int getMaxConnectionsPerClient() {
    return maxConnectionsPerClient;
  }

  /** Clients' worth of each per-client budget an IPv4 /24 or IPv6 /48 gets (a /56 a quarter of it). */
  public int getClientsPerNetwork() {
    return clientsPerNetwork;
  }
}
