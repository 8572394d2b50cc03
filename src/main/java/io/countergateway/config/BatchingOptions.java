package io.countergateway.config;

import java.util.concurrent.ThreadLocalRandom;

import static io.countergateway.config.ConfigKey.BOOLEAN;
import static io.countergateway.config.ConfigKey.INT;
import static io.countergateway.config.ConfigKey.any;
import static io.countergateway.config.ConfigKey.between;

/** How each coalescer groups increments into flushes, and how much it may hold while the database is slow. */
public final class BatchingOptions {
  static final ConfigDef KEYS = ConfigDef.section("batching");
  public static final ConfigKey<Integer> MAX_DELAY_MS = KEYS.define("maxDelayMs", INT, 2, between(0, 60_000),
    "longest a pending increment waits for company before its flush starts");
  public static final ConfigKey<Integer> MAX_KEYS = KEYS.define("maxKeys", INT, 1000, between(1, 10_000),
    "counters per flush: a coalescer holding this many flushes at once");
  /** While the flushes in flight run, the next batch grows (group commit). */
  public static final ConfigKey<Integer> MAX_IN_FLIGHT = KEYS.define("maxInFlight", INT, 1, between(1, 64),
    "flushes in flight per coalescer (group commit)");
  /**
   * ~140 bytes + the id each (~400 bytes at 255-character ids: 16 MB per verticle when full): sized with the other
   * bounds so that all of them full at once fit the heap of conf/jvm.options (config.MemoryBudget, README "Sizing").
   */
  public static final ConfigKey<Integer> MAX_PENDING_KEYS = KEYS.define("maxPendingKeys", INT, 40_000,
    between(1, 10_000_000), "counters a coalescer may hold before refusing new ones (503); at least `maxKeys`");
  /** ~200 bytes each: 4 MB per verticle when full; twice the default batch (maxBatchIncrements) at once. */
  public static final ConfigKey<Integer> MAX_WAITING_REQUESTS = KEYS.define("maxWaitingRequests", INT, 20_000,
    between(1, 10_000_000), "committing requests a coalescer may hold before refusing new ones (503)");
  /** Off only to measure what the flush-id bookkeeping costs: a retried ambiguous flush may then count twice. */
  public static final ConfigKey<Boolean> EXACTLY_ONCE = KEYS.define("exactlyOnce", BOOLEAN, true, any(),
    "commit each flush with its flush id, so a retried flush never counts twice");
  /** Far longer than any retry of an ambiguous flush can take, and ten heartbeats of an idle source at least. */
  public static final ConfigKey<Integer> FLUSH_ID_RETENTION_SECONDS = KEYS.define("flushIdRetentionSeconds", INT, 86_400,
    between(60, 365 * 86_400), "a flush source silent this long is closed (an idle one beats every tenth of it, at "
      + "most every minute); its gateway, if alive, resolves its flushes by id and goes on under a new source; closed "
      + "this long again, it is deleted");
  public static final ConfigKey<Integer> PRUNE_INTERVAL_SECONDS = KEYS.define("pruneIntervalSeconds", INT, 600,
    between(1, 86_400), "how often each gateway looks for dead flush sources");
  /** Guards against a connection that silently stops answering; safe because a flush id makes the retry idempotent. */
  public static final ConfigKey<Integer> WRITE_TIMEOUT_MS = KEYS.define("writeTimeoutMs", INT, 15_000,
    between(100, 600_000), "a write attempt unanswered by then is retried like a lost connection");
  public static final ConfigKey<Integer> RETRY_INITIAL_MS = KEYS.define("retryInitialMs", INT, 50, between(1, 60_000),
    "first pause before retrying a failed write (lost connection, deadlock, lock timeout)");
  public static final ConfigKey<Integer> RETRY_MAX_MS = KEYS.define("retryMaxMs", INT, 2_000, between(1, 600_000),
    "longest pause between write retries; at least `retryInitialMs`");
  /**
   * A flush id must outlive every retry of its flush: an attempt lasts at most writeTimeoutMs, the pause between two at
   * most retryMaxMs. The retention must cover at least this many such retries; an outage longer than that is logged.
   */
  public static final int RETRIES_WITHIN_RETENTION = 100;
  /**
   * An idle flush source beats its heart this many times within the retention, so that a prune (of any replica) never
   * closes a healthy gateway's source: a few heartbeats lost to a slow or briefly unreachable database do not matter.
   */
  public static final int HEARTBEATS_WITHIN_RETENTION = 10;
  /** The heartbeat at the default retention of a day; shorter retentions beat more often. */
  static final long MAX_HEARTBEAT_MS = 60_000;

  private final int maxDelayMs;
  private final int maxKeys;
  private final int maxInFlight;
  private final int maxPendingKeys;
  private final int maxWaitingRequests;
  private final boolean exactlyOnce;
  private final int flushIdRetentionSeconds;
  private final int pruneIntervalSeconds;
  private final int writeTimeoutMs;
  private final int retryInitialMs;
  private final int retryMaxMs;

  private BatchingOptions(ConfigSection section) {
    maxDelayMs = section.get(MAX_DELAY_MS);
    maxKeys = section.get(MAX_KEYS);
    maxInFlight = section.get(MAX_IN_FLIGHT);
    maxPendingKeys = section.get(MAX_PENDING_KEYS);
    maxWaitingRequests = section.get(MAX_WAITING_REQUESTS);
    exactlyOnce = section.get(EXACTLY_ONCE);
    flushIdRetentionSeconds = section.get(FLUSH_ID_RETENTION_SECONDS);
    pruneIntervalSeconds = section.get(PRUNE_INTERVAL_SECONDS);
    writeTimeoutMs = section.get(WRITE_TIMEOUT_MS);
    retryInitialMs = section.get(RETRY_INITIAL_MS);
    retryMaxMs = section.get(RETRY_MAX_MS);
  }

  static BatchingOptions from(ConfigSection section) {
    BatchingOptions options = new BatchingOptions(section);
    if (options.maxPendingKeys < options.maxKeys) {
      throw new ConfigException(section.key(MAX_PENDING_KEYS), "must be at least " + section.key(MAX_KEYS)
        + " (" + options.maxKeys + ")");
    }
    if (options.retryMaxMs < options.retryInitialMs) {
      throw new ConfigException(section.key(RETRY_MAX_MS), "must be at least " + section.key(RETRY_INITIAL_MS)
        + " (" + options.retryInitialMs + ")");
    }
    long minRetentionSeconds = options.minFlushIdRetentionSeconds();
    if (options.flushIdRetentionSeconds < minRetentionSeconds) {
      throw new ConfigException(section.key(FLUSH_ID_RETENTION_SECONDS), "must be at least " + minRetentionSeconds
        + " (" + RETRIES_WITHIN_RETENTION + " retries of " + section.key(WRITE_TIMEOUT_MS) + " + "
        + section.key(RETRY_MAX_MS) + "), got " + options.flushIdRetentionSeconds);
    }
    return options;
  }

  public int getMaxDelayMs() {
    return maxDelayMs;
  }

  public int getMaxKeys() {
    return maxKeys;
  }

  public int getMaxInFlight() {
    return maxInFlight;
  }

  public int getMaxPendingKeys() {
    return maxPendingKeys;
  }

  public int getMaxWaitingRequests() {
    return maxWaitingRequests;
  }

  public boolean isExactlyOnce() {
    return exactlyOnce;
  }

  /** The shortest flush-id retention that covers {@link #RETRIES_WITHIN_RETENTION} retries. */
  public long minFlushIdRetentionSeconds() {
    return ((long) writeTimeoutMs + retryMaxMs) * RETRIES_WITHIN_RETENTION / 1000;
  }

  /**
   * How often an idle flush source proves it is alive: a tenth of the retention ({@link #HEARTBEATS_WITHIN_RETENTION}),
   * at most a minute. A busy source beats with every advance of its fence, about once a second.
   */
  public long flushSourceHeartbeatMs() {
    return Math.min(MAX_HEARTBEAT_MS, flushIdRetentionSeconds * 1000L / HEARTBEATS_WITHIN_RETENTION);
  }

  public int getFlushIdRetentionSeconds() {
    return flushIdRetentionSeconds;
  }

  public int getPruneIntervalSeconds() {
    return pruneIntervalSeconds;
  }

  public int getWriteTimeoutMs() {
    return writeTimeoutMs;
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

  public int getRetryMaxMs() {
    return retryMaxMs;
  }
}
