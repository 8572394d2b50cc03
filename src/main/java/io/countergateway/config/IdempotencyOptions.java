package io.countergateway.config;

import java.time.Duration;
import java.time.temporal.ChronoUnit;

import static io.countergateway.config.ConfigKey.DURATION;
import static io.countergateway.config.ConfigKey.INT;
import static io.countergateway.config.ConfigKey.Importance.LOW;
import static io.countergateway.config.ConfigKey.Importance.MEDIUM;
import static io.countergateway.config.ConfigKey.between;

/** Requests that carry an {@code Idempotency-Key}: how long a key is remembered, and how many may be in flight. */
public final class IdempotencyOptions {
  static final ConfigDef KEYS = ConfigDef.section("idempotency");

  static {
    KEYS.retired("maxInFlight", "derived from the heap (docs/operations.md \"Sizing\")");
  }

  public static final ConfigKey<Duration> RETENTION = KEYS.define("retention", MEDIUM, DURATION, Duration.ofDays(1),
    between(Duration.ofMinutes(1), Duration.ofDays(365)), "a repeated key within this long (at least) is counted once "
      + "and answered again")
    .formerly("retentionSeconds", ChronoUnit.SECONDS);
  public static final ConfigKey<Duration> EXPIRY_INTERVAL = KEYS.define("expiryInterval", LOW, DURATION, Duration.ofMinutes(1),
    between(Duration.ofSeconds(1), Duration.ofDays(1)), "how often keys older than the retention are deleted")
    .formerly("expiryIntervalSeconds", ChronoUnit.SECONDS);
  /** Keyed requests are not coalesced: one transaction each. */
  public static final ConfigKey<Integer> POOL_SIZE = KEYS.define("poolSize", LOW, INT, 4, between(1, 256),
    "connections of each ingest verticle for keyed requests (one transaction each)");

  private final int retentionSeconds;
  private final int expiryIntervalSeconds;
  private final int poolSize;

  private IdempotencyOptions(ConfigSection section) {
    retentionSeconds = (int) section.get(RETENTION).toSeconds();
    expiryIntervalSeconds = (int) section.get(EXPIRY_INTERVAL).toSeconds();
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

  /** Connections of each ingest verticle for keyed requests (they are not coalesced: one transaction each). */
  public int getPoolSize() {
    return poolSize;
  }
}
