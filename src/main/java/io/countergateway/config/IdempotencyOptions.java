package io.countergateway.config;

/** Requests that carry an {@code Idempotency-Key}: how long a key is remembered, and how many may be in flight. */
public class IdempotencyOptions {
  public static final int DEFAULT_RETENTION_SECONDS = 86_400;
  public static final int DEFAULT_EXPIRY_INTERVAL_SECONDS = 60;
  public static final int DEFAULT_MAX_IN_FLIGHT = 10_000;
  public static final int DEFAULT_POOL_SIZE = 4;

  private int retentionSeconds = DEFAULT_RETENTION_SECONDS;
  private int expiryIntervalSeconds = DEFAULT_EXPIRY_INTERVAL_SECONDS;
  private int maxInFlight = DEFAULT_MAX_IN_FLIGHT;
  private int poolSize = DEFAULT_POOL_SIZE;

  static IdempotencyOptions from(ConfigSection section) {
    return new IdempotencyOptions()
      .setRetentionSeconds(section.intValue("retentionSeconds", DEFAULT_RETENTION_SECONDS))
      .setExpiryIntervalSeconds(section.intValue("expiryIntervalSeconds", DEFAULT_EXPIRY_INTERVAL_SECONDS))
      .setMaxInFlight(section.intValue("maxInFlight", DEFAULT_MAX_IN_FLIGHT))
      .setPoolSize(section.intValue("poolSize", DEFAULT_POOL_SIZE));
  }

  public int getRetentionSeconds() {
    return retentionSeconds;
  }

  /** A repeat within this long (at least) is recognised; the expiry job deletes older keys. */
  public IdempotencyOptions setRetentionSeconds(int retentionSeconds) {
    this.retentionSeconds = Checks.range("idempotency.retentionSeconds", retentionSeconds, 60, 31_536_000);
    return this;
  }

  public int getExpiryIntervalSeconds() {
    return expiryIntervalSeconds;
  }

  public IdempotencyOptions setExpiryIntervalSeconds(int expiryIntervalSeconds) {
    this.expiryIntervalSeconds = Checks.range("idempotency.expiryIntervalSeconds", expiryIntervalSeconds, 1, 86_400);
    return this;
  }

  public int getMaxInFlight() {
    return maxInFlight;
  }

  /** Keyed requests one ingest verticle writes at once; more get 503. */
  public IdempotencyOptions setMaxInFlight(int maxInFlight) {
    this.maxInFlight = Checks.range("idempotency.maxInFlight", maxInFlight, 1, 1_000_000);
    return this;
  }

  public int getPoolSize() {
    return poolSize;
  }

  /** Connections of each ingest verticle for keyed requests (they are not coalesced: one transaction each). */
  public IdempotencyOptions setPoolSize(int poolSize) {
    this.poolSize = Checks.range("idempotency.poolSize", poolSize, 1, 256);
    return this;
  }
}
