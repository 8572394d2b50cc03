package io.countergateway.config;

import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/** What the gateway accepts from clients; everything outside these limits gets a 4xx and is not written. */
public class LimitsOptions {
  public static final int DEFAULT_MAX_BODY_BYTES = 1_048_576;
  public static final int DEFAULT_MAX_ID_LENGTH = 255;
  /** Letters, digits and a few URL-safe punctuation marks: enough for paths and composite ids like {@code repo:42}. */
  public static final String DEFAULT_ID_PATTERN = "[A-Za-z0-9._~:/@+=!,-]+";
  public static final long DEFAULT_MIN_DELTA = -1_000_000;
  public static final long DEFAULT_MAX_DELTA = 1_000_000;
  public static final int DEFAULT_MAX_BATCH_INCREMENTS = 10_000;
  public static final int DEFAULT_REQUEST_TIMEOUT_MS = 10_000;
  public static final int DEFAULT_MAX_READ_IDS = 1_000;
  public static final int DEFAULT_MAX_HEADER_BYTES = 8_192;
  public static final int DEFAULT_IDLE_TIMEOUT_SECONDS = 60;

  private int maxBodyBytes = DEFAULT_MAX_BODY_BYTES;
  private int maxIdLength = DEFAULT_MAX_ID_LENGTH;
  private Pattern idPattern = Pattern.compile(DEFAULT_ID_PATTERN);
  private long minDelta = DEFAULT_MIN_DELTA;
  private long maxDelta = DEFAULT_MAX_DELTA;
  private int maxBatchIncrements = DEFAULT_MAX_BATCH_INCREMENTS;
  private int requestTimeoutMs = DEFAULT_REQUEST_TIMEOUT_MS;
  private int maxReadIds = DEFAULT_MAX_READ_IDS;
  private int maxHeaderBytes = DEFAULT_MAX_HEADER_BYTES;
  private int idleTimeoutSeconds = DEFAULT_IDLE_TIMEOUT_SECONDS;

  static LimitsOptions from(ConfigSection section) {
    LimitsOptions options = new LimitsOptions()
      .setMaxBodyBytes(section.intValue("maxBodyBytes", DEFAULT_MAX_BODY_BYTES))
      .setMaxIdLength(section.intValue("maxIdLength", DEFAULT_MAX_ID_LENGTH))
      .setIdPattern(section.stringValue("idPattern", DEFAULT_ID_PATTERN))
      .setMinDelta(section.longValue("minDelta", DEFAULT_MIN_DELTA))
      .setMaxDelta(section.longValue("maxDelta", DEFAULT_MAX_DELTA))
      .setMaxBatchIncrements(section.intValue("maxBatchIncrements", DEFAULT_MAX_BATCH_INCREMENTS))
      .setRequestTimeoutMs(section.intValue("requestTimeoutMs", DEFAULT_REQUEST_TIMEOUT_MS))
      .setMaxReadIds(section.intValue("maxReadIds", DEFAULT_MAX_READ_IDS))
      .setMaxHeaderBytes(section.intValue("maxHeaderBytes", DEFAULT_MAX_HEADER_BYTES))
      .setIdleTimeoutSeconds(section.intValue("idleTimeoutSeconds", DEFAULT_IDLE_TIMEOUT_SECONDS));
    if (options.minDelta > options.maxDelta) {
      throw new ConfigException("limits.minDelta", "must not exceed limits.maxDelta (" + options.maxDelta + ")");
    }
    return options;
  }

  public int getMaxBodyBytes() {
    return maxBodyBytes;
  }

  public LimitsOptions setMaxBodyBytes(int maxBodyBytes) {
    this.maxBodyBytes = Checks.range("limits.maxBodyBytes", maxBodyBytes, 64, 64 * 1024 * 1024);
    return this;
  }

  public int getMaxIdLength() {
    return maxIdLength;
  }

  /** At most 255: the record_id column's width. */
  public LimitsOptions setMaxIdLength(int maxIdLength) {
    this.maxIdLength = Checks.range("limits.maxIdLength", maxIdLength, 1, 255);
    return this;
  }

  public Pattern getIdPattern() {
    return idPattern;
  }

  public LimitsOptions setIdPattern(String regex) {
    try {
      this.idPattern = Pattern.compile(Checks.notBlank("limits.idPattern", regex));
    } catch (PatternSyntaxException e) {
      throw new ConfigException("limits.idPattern", "is not a valid regular expression: " + e.getDescription());
    }
    return this;
  }

  public long getMinDelta() {
    return minDelta;
  }

  public LimitsOptions setMinDelta(long minDelta) {
    this.minDelta = Checks.range("limits.minDelta", minDelta, -1_000_000_000_000L, 1_000_000_000_000L);
    return this;
  }

  public long getMaxDelta() {
    return maxDelta;
  }

  public LimitsOptions setMaxDelta(long maxDelta) {
    this.maxDelta = Checks.range("limits.maxDelta", maxDelta, -1_000_000_000_000L, 1_000_000_000_000L);
    return this;
  }

  public int getMaxBatchIncrements() {
    return maxBatchIncrements;
  }

  public LimitsOptions setMaxBatchIncrements(int maxBatchIncrements) {
    this.maxBatchIncrements = Checks.range("limits.maxBatchIncrements", maxBatchIncrements, 1, 1_000_000);
    return this;
  }

  public int getRequestTimeoutMs() {
    return requestTimeoutMs;
  }

  /** How long a committing request waits before it is answered 503 (withdrawn) or 504 (outcome unknown). */
  public LimitsOptions setRequestTimeoutMs(int requestTimeoutMs) {
    this.requestTimeoutMs = Checks.range("limits.requestTimeoutMs", requestTimeoutMs, 10, 600_000);
    return this;
  }

  public int getMaxReadIds() {
    return maxReadIds;
  }

  public LimitsOptions setMaxReadIds(int maxReadIds) {
    this.maxReadIds = Checks.range("limits.maxReadIds", maxReadIds, 1, 100_000);
    return this;
  }

  public int getMaxHeaderBytes() {
    return maxHeaderBytes;
  }

  /** All request headers together; the request line may be half as long. Larger requests get 431 / 414. */
  public LimitsOptions setMaxHeaderBytes(int maxHeaderBytes) {
    this.maxHeaderBytes = Checks.range("limits.maxHeaderBytes", maxHeaderBytes, 1_024, 1_048_576);
    return this;
  }

  public int getIdleTimeoutSeconds() {
    return idleTimeoutSeconds;
  }

  /** A connection that sends nothing for this long is closed, so half-sent requests cannot hold connections forever. */
  public LimitsOptions setIdleTimeoutSeconds(int idleTimeoutSeconds) {
    this.idleTimeoutSeconds = Checks.range("limits.idleTimeoutSeconds", idleTimeoutSeconds, 1, 3_600);
    return this;
  }
}
