package io.countergateway.config;

import java.util.concurrent.ThreadLocalRandom;

/** How each coalescer groups increments into flushes, and how much it may hold while the database is slow. */
public class BatchingOptions {
  /** Longest a pending delta waits for company before its flush starts. */
  public static final int DEFAULT_MAX_DELAY_MS = 2;
  /** A coalescer flushes at once when it holds this many counters. */
  public static final int DEFAULT_MAX_KEYS = 1000;
  /** Flushes one coalescer may have in flight; while they run the next batch grows (group commit). */
  public static final int DEFAULT_MAX_IN_FLIGHT = 1;
  /** Distinct counters a coalescer may hold before new counters are refused with 503. */
  public static final int DEFAULT_MAX_PENDING_KEYS = 100_000;
  /** Requests a coalescer may keep waiting for a commit before new ones are refused with 503. */
  public static final int DEFAULT_MAX_WAITING_REQUESTS = 50_000;
  /** Whether each flush commits together with its flush id, so a retried flush is never counted twice. */
  public static final boolean DEFAULT_EXACTLY_ONCE = true;
  /** How long committed flush ids are kept: far longer than any retry of an ambiguous flush can take. */
  public static final int DEFAULT_FLUSH_ID_RETENTION_SECONDS = 86_400;
  public static final int DEFAULT_PRUNE_INTERVAL_SECONDS = 600;
  /** A write attempt not answered by then is treated like a lost connection: the same flush is tried again. */
  public static final int DEFAULT_WRITE_TIMEOUT_MS = 15_000;
  public static final int DEFAULT_RETRY_INITIAL_MS = 50;
  public static final int DEFAULT_RETRY_MAX_MS = 2_000;
  /**
   * A flush id must outlive every retry of its flush: an attempt lasts at most writeTimeoutMs, the pause between two at
   * most retryMaxMs. The retention must cover at least this many such retries; an outage longer than that is logged.
   */
  public static final int RETRIES_WITHIN_RETENTION = 100;

  private int maxDelayMs = DEFAULT_MAX_DELAY_MS;
  private int maxKeys = DEFAULT_MAX_KEYS;
  private int maxInFlight = DEFAULT_MAX_IN_FLIGHT;
  private int maxPendingKeys = DEFAULT_MAX_PENDING_KEYS;
  private int maxWaitingRequests = DEFAULT_MAX_WAITING_REQUESTS;
  private boolean exactlyOnce = DEFAULT_EXACTLY_ONCE;
  private int flushIdRetentionSeconds = DEFAULT_FLUSH_ID_RETENTION_SECONDS;
  private int pruneIntervalSeconds = DEFAULT_PRUNE_INTERVAL_SECONDS;
  private int writeTimeoutMs = DEFAULT_WRITE_TIMEOUT_MS;
  private int retryInitialMs = DEFAULT_RETRY_INITIAL_MS;
  private int retryMaxMs = DEFAULT_RETRY_MAX_MS;

  static BatchingOptions from(ConfigSection section) {
    BatchingOptions options = new BatchingOptions()
      .setMaxDelayMs(section.intValue("maxDelayMs", DEFAULT_MAX_DELAY_MS))
      .setMaxKeys(section.intValue("maxKeys", DEFAULT_MAX_KEYS))
      .setMaxInFlight(section.intValue("maxInFlight", DEFAULT_MAX_IN_FLIGHT))
      .setMaxPendingKeys(section.intValue("maxPendingKeys", DEFAULT_MAX_PENDING_KEYS))
      .setMaxWaitingRequests(section.intValue("maxWaitingRequests", DEFAULT_MAX_WAITING_REQUESTS))
      .setExactlyOnce(section.boolValue("exactlyOnce", DEFAULT_EXACTLY_ONCE))
      .setFlushIdRetentionSeconds(section.intValue("flushIdRetentionSeconds", DEFAULT_FLUSH_ID_RETENTION_SECONDS))
      .setPruneIntervalSeconds(section.intValue("pruneIntervalSeconds", DEFAULT_PRUNE_INTERVAL_SECONDS))
      .setWriteTimeoutMs(section.intValue("writeTimeoutMs", DEFAULT_WRITE_TIMEOUT_MS))
      .setRetryInitialMs(section.intValue("retryInitialMs", DEFAULT_RETRY_INITIAL_MS))
      .setRetryMaxMs(section.intValue("retryMaxMs", DEFAULT_RETRY_MAX_MS));
    if (options.maxPendingKeys < options.maxKeys) {
      throw new ConfigException("batching.maxPendingKeys", "must be at least batching.maxKeys (" + options.maxKeys + ")");
    }
    if (options.retryMaxMs < options.retryInitialMs) {
      throw new ConfigException("batching.retryMaxMs", "must be at least batching.retryInitialMs (" + options.retryInitialMs + ")");
    }
    long minRetentionSeconds = options.minFlushIdRetentionSeconds();
    if (options.flushIdRetentionSeconds < minRetentionSeconds) {
      throw new ConfigException("batching.flushIdRetentionSeconds", "must be at least " + minRetentionSeconds
        + " (" + RETRIES_WITHIN_RETENTION + " retries of batching.writeTimeoutMs + batching.retryMaxMs), got "
        + options.flushIdRetentionSeconds);
    }
    return options;
  }

  public int getMaxDelayMs() {
    return maxDelayMs;
  }

  public BatchingOptions setMaxDelayMs(int maxDelayMs) {
    this.maxDelayMs = Checks.range("batching.maxDelayMs", maxDelayMs, 0, 60_000);
    return this;
  }

  public int getMaxKeys() {
    return maxKeys;
  }

  public BatchingOptions setMaxKeys(int maxKeys) {
    this.maxKeys = Checks.range("batching.maxKeys", maxKeys, 1, 10_000);
    return this;
  }

  public int getMaxInFlight() {
    return maxInFlight;
  }

  public BatchingOptions setMaxInFlight(int maxInFlight) {
    this.maxInFlight = Checks.range("batching.maxInFlight", maxInFlight, 1, 64);
    return this;
  }

  public int getMaxPendingKeys() {
    return maxPendingKeys;
  }

  public BatchingOptions setMaxPendingKeys(int maxPendingKeys) {
    this.maxPendingKeys = Checks.range("batching.maxPendingKeys", maxPendingKeys, 1, 10_000_000);
    return this;
  }

  public int getMaxWaitingRequests() {
    return maxWaitingRequests;
  }

  public BatchingOptions setMaxWaitingRequests(int maxWaitingRequests) {
    this.maxWaitingRequests = Checks.range("batching.maxWaitingRequests", maxWaitingRequests, 1, 10_000_000);
    return this;
  }

  public boolean isExactlyOnce() {
    return exactlyOnce;
  }

  /** Off only to measure what the flush-id bookkeeping costs: a retried ambiguous flush may then count twice. */
  public BatchingOptions setExactlyOnce(boolean exactlyOnce) {
    this.exactlyOnce = exactlyOnce;
    return this;
  }

  /** The shortest flush-id retention that covers {@link #RETRIES_WITHIN_RETENTION} retries. */
  public long minFlushIdRetentionSeconds() {
    return ((long) writeTimeoutMs + retryMaxMs) * RETRIES_WITHIN_RETENTION / 1000;
  }

  public int getFlushIdRetentionSeconds() {
    return flushIdRetentionSeconds;
  }

  public BatchingOptions setFlushIdRetentionSeconds(int flushIdRetentionSeconds) {
    this.flushIdRetentionSeconds = Checks.range("batching.flushIdRetentionSeconds", flushIdRetentionSeconds, 60, 365 * 86_400);
    return this;
  }

  public int getPruneIntervalSeconds() {
    return pruneIntervalSeconds;
  }

  public BatchingOptions setPruneIntervalSeconds(int pruneIntervalSeconds) {
    this.pruneIntervalSeconds = Checks.range("batching.pruneIntervalSeconds", pruneIntervalSeconds, 1, 86_400);
    return this;
  }

  public int getWriteTimeoutMs() {
    return writeTimeoutMs;
  }

  /** Guards against a connection that silently stops answering; safe because a flush id makes the retry idempotent. */
  public BatchingOptions setWriteTimeoutMs(int writeTimeoutMs) {
    this.writeTimeoutMs = Checks.range("batching.writeTimeoutMs", writeTimeoutMs, 100, 600_000);
    return this;
  }

  /**
   * The pause before retry {@code attemptNo + 1} of a write: exponential from retryInitialMs, capped at retryMaxMs, with
   * jitter so that writers do not retry in step; at least 1 ms, since Vert.x refuses a shorter timer (and a refused
   * timer would leave the write unretried for good).
   */
  public long retryDelayMs(int attemptNo) {
    long ceiling = Math.min(retryMaxMs, (long) retryInitialMs << Math.min(attemptNo, 20));
    return Math.max(1, ceiling / 2 + ThreadLocalRandom.current().nextLong(ceiling / 2 + 1));
  }

  public int getRetryInitialMs() {
    return retryInitialMs;
  }

  public BatchingOptions setRetryInitialMs(int retryInitialMs) {
    this.retryInitialMs = Checks.range("batching.retryInitialMs", retryInitialMs, 1, 60_000);
    return this;
  }

  public int getRetryMaxMs() {
    return retryMaxMs;
  }

  public BatchingOptions setRetryMaxMs(int retryMaxMs) {
    this.retryMaxMs = Checks.range("batching.retryMaxMs", retryMaxMs, 1, 600_000);
    return this;
  }
}
