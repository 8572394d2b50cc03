package io.countergateway.config;

import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A windowed namespace's buckets: {@code namespaces.<name>.window}. Increments land in the bucket (UTC minute, hour
 * or day) of the instant they are taken; buckets older than the retention are deleted by the retention job.
 */
public final class WindowOptions {
  private static final Pattern DURATION = Pattern.compile("(\\d{1,9})([smhd])");

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
    String bucketText = section.stringValue("bucket", null);
    if (bucketText == null) {
      throw new ConfigException(section.key("bucket"), "is required: minute, hour or day");
    }
    Bucket bucket;
    try {
      bucket = Bucket.valueOf(bucketText.trim().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new ConfigException(section.key("bucket"), "must be minute, hour or day, got '" + bucketText + "'");
    }
    Duration retention = duration(section, "retention", "30d");
    if (retention.getSeconds() < bucket.seconds || retention.getSeconds() > 3_660L * 86_400) {
      throw new ConfigException(section.key("retention"), "must be at least one bucket (" + bucket.label()
        + ") and at most 3660d, got " + section.stringValue("retention", "30d"));
    }
    Duration skew = duration(section, "maxFutureSkew", "5m");
    if (skew.toDays() > 1) {
      throw new ConfigException(section.key("maxFutureSkew"), "must be at most 1d, got " + section.stringValue("maxFutureSkew", ""));
    }
    int maxRangeBuckets = section.intValue("maxRangeBuckets", 1_000, 1, 1_000_000);
    int expiryInterval = section.intValue("expiryIntervalSeconds", 60, 1, 86_400);
    return new WindowOptions(bucket, retention, skew, maxRangeBuckets, expiryInterval);
  }

  /** {@code 90s}, {@code 5m}, {@code 24h}, {@code 30d}. */
  private static Duration duration(ConfigSection section, String name, String defaultValue) {
    String text = section.stringValue(name, defaultValue).trim();
    Matcher matcher = DURATION.matcher(text);
    if (!matcher.matches()) {
      throw new ConfigException(section.key(name), "must be a whole number followed by s, m, h or d (e.g. 30d), got '" + text + "'");
    }
    long amount = Long.parseLong(matcher.group(1));
    return switch (matcher.group(2)) {
      case "s" -> Duration.ofSeconds(amount);
      case "m" -> Duration.ofMinutes(amount);
      case "h" -> Duration.ofHours(amount);
      default -> Duration.ofDays(amount);
    };
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
