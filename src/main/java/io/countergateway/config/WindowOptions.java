package io.countergateway.config;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.time.Instant;
import java.util.Locale;

import static io.countergateway.config.ConfigKey.DURATION;
import static io.countergateway.config.ConfigKey.INT;
import static io.countergateway.config.ConfigKey.Importance.HIGH;
import static io.countergateway.config.ConfigKey.Importance.LOW;
import static io.countergateway.config.ConfigKey.Importance.MEDIUM;
import static io.countergateway.config.ConfigKey.any;
import static io.countergateway.config.ConfigKey.atMost;
import static io.countergateway.config.ConfigKey.between;
import static io.countergateway.config.ConfigKey.choice;

/**
 * A windowed namespace's buckets: {@code namespaces.<name>.window}. Increments land in the bucket (UTC minute, hour
 * or day) of the instant they are taken; buckets older than the retention are deleted by the retention job.
 */
public final class WindowOptions {
  static final ConfigDef KEYS = ConfigDef.section("namespaces.<name>.window");
  public static final ConfigKey<String> BUCKET = KEYS.defineRequired("bucket", HIGH, choice("minute", "hour", "day"), any(),
    "a windowed namespace's bucket (UTC, from the epoch); increments land in the bucket of the instant they are taken");
  public static final ConfigKey<Duration> RETENTION = KEYS.define("retention", MEDIUM, DURATION, Duration.ofDays(30),
    atMost(Duration.ofDays(3_660)), "buckets older than this are deleted; at least one bucket");
  public static final ConfigKey<Duration> MAX_FUTURE_SKEW = KEYS.define("maxFutureSkew", LOW, DURATION, Duration.ofMinutes(5),
    atMost(Duration.ofDays(1)), "how far ahead of the gateway's clock an explicit `at` may be");
  public static final ConfigKey<Integer> MAX_RANGE_BUCKETS = KEYS.define("maxRangeBuckets", LOW, INT, 1_000,
    between(1, 1_000_000), "widest range, in buckets, one read may ask for");
  public static final ConfigKey<Duration> EXPIRY_INTERVAL = KEYS.define("expiryInterval", LOW, DURATION, Duration.ofMinutes(1),
    between(Duration.ofSeconds(1), Duration.ofDays(1)), "how often the retention job looks for expired buckets")
    .formerly("expiryIntervalSeconds", ChronoUnit.SECONDS);

  /** A bucket's length; buckets start at whole UTC minutes, hours or days since the epoch. */
  public enum Bucket {
    MINUTE(60), HOUR(3_600), DAY(86_400);

    public final long seconds;

    Bucket(long seconds) {
      this.seconds = seconds;
    }

    public String label() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  private final Bucket bucket;
  private final Duration retention;
  private final Duration maxFutureSkew;
  private final int maxRangeBuckets;
  private final int expiryIntervalSeconds;

  public WindowOptions(Bucket bucket, Duration retention, Duration maxFutureSkew, int maxRangeBuckets,
                       int expiryIntervalSeconds) {
    this.bucket = bucket;
    this.retention = retention;
    this.maxFutureSkew = maxFutureSkew;
    this.maxRangeBuckets = maxRangeBuckets;
    this.expiryIntervalSeconds = expiryIntervalSeconds;
  }

  static WindowOptions from(ConfigSection section) {
    Bucket bucket = Bucket.valueOf(section.get(BUCKET).toUpperCase(Locale.ROOT));
    Duration retention = section.get(RETENTION);
    if (retention.getSeconds() < bucket.seconds) {
      throw new ConfigException(section.key(RETENTION), "must be at least one bucket (" + bucket.label()
        + "), got " + ConfigKey.durationText(retention));
    }
    return new WindowOptions(bucket, retention, section.get(MAX_FUTURE_SKEW), section.get(MAX_RANGE_BUCKETS),
      (int) section.get(EXPIRY_INTERVAL).toSeconds());
  }

  public Bucket getBucket() {
    return bucket;
  }

  public Duration getRetention() {
    return retention;
  }

  public Duration getMaxFutureSkew() {
    return maxFutureSkew;
  }

  public int getMaxRangeBuckets() {
    return maxRangeBuckets;
  }

  /** How often the retention job looks for expired buckets. */
  public int getExpiryIntervalSeconds() {
    return expiryIntervalSeconds;
  }

  /** The start (epoch seconds) of the bucket holding {@code instant}. */
  public long bucketOf(Instant instant) {
    return Math.floorDiv(instant.getEpochSecond(), bucket.seconds) * bucket.seconds;
  }

  /** The start of the oldest bucket still inside the retention at {@code now}. */
  public long oldestKept(Instant now) {
    return bucketOf(now.minus(retention));
  }
}
