package io.countergateway.config;

import static io.countergateway.config.ConfigKey.INT;
import static io.countergateway.config.ConfigKey.between;

/** Requests that carry an {@code Idempotency-Key}: how long a key is remembered, and how many may be in flight. */
public final class IdempotencyOptions {
  static final ConfigDef KEYS = ConfigDef.section("idempotency");
  public static final ConfigKey<Integer> RETENTION_SECONDS = KEYS.define("retentionSeconds", INT, 86_400,
    between(60, 31_536_000), "a repeated key within this long (at least) is counted once and answered again");
  public static final ConfigKey<Integer> EXPIRY_INTERVAL_SECONDS = KEYS.define("expiryIntervalSeconds", INT, 60,
    between(1, 86_400), "how often keys older than the retention are deleted");
  public static final ConfigKey<Integer> MAX_IN_FLIGHT = KEYS.define("maxInFlight", INT, 10_000, between(1, 1_000_000),
    "keyed requests one ingest verticle writes at once; more get 503");
  /** Keyed requests are not coalesced: one transaction each. */
  public static final ConfigKey<Integer> POOL_SIZE = KEYS.define("poolSize", INT, 4, between(1, 256),
    "connections of each ingest verticle for keyed requests (one transaction each)");

  private final int retentionSeconds;
  private final int expiryIntervalSeconds;
  private final int maxInFlight;
  private final int poolSize;

  private IdempotencyOptions(ConfigSection section) {
    retentionSeconds = section.get(RETENTION_SECONDS);
    expiryIntervalSeconds = section.get(EXPIRY_INTERVAL_SECONDS);
    maxInFlight = section.get(MAX_IN_FLIGHT);
    poolSize = section.get(POOL_SIZE);
  }

  static IdempotencyOptions from(ConfigSection section) {
    return new IdempotencyOptions(section);
  }

  /** A repeat within this long (at least) is recognised; the expiry job deletes older keys. */
  public int getRetentionSeconds() {
    return retentionSeconds;
  }

  public int getExpiryIntervalSeconds() {
    return expiryIntervalSeconds;
  }

  /** Keyed requests one ingest verticle writes at once; more get 503. */
  public int getMaxInFlight() {
    return maxInFlight;
  }

  /** Connections of each ingest verticle for keyed requests (they are not coalesced: one transaction each). */
  public int getPoolSize() {
    return poolSize;
  }
}
