package io.countergateway.config;

import java.time.Duration;
import java.time.temporal.ChronoUnit;

import java.util.concurrent.ThreadLocalRandom;

import static io.countergateway.config.ConfigKey.BOOLEAN;
import static io.countergateway.config.ConfigKey.DURATION;
import static io.countergateway.config.ConfigKey.INT;
import static io.countergateway.config.ConfigKey.Importance.LOW;
import static io.countergateway.config.ConfigKey.Importance.MEDIUM;
import static io.countergateway.config.ConfigKey.any;
import static io.countergateway.config.ConfigKey.between;

/** How each coalescer groups increments into flushes, and how much it may hold while the database is slow. */
public final class BatchingOptions {
  static final ConfigDef KEYS = ConfigDef.section("batching");

  static {
    KEYS.retired("exactlyOnce", "every flush is written exactly once (docs/guarantees.md)");
    KEYS.retired("maxPendingKeys", "derived from the heap (docs/operations.md \"Sizing\")");
    KEYS.retired("maxWaitingRequests", "derived from the heap (docs/operations.md \"Sizing\")");
  }

  public static final ConfigKey<Duration> MAX_DELAY = KEYS.define("maxDelay", MEDIUM, DURATION, Duration.ofMillis(2),
    between(Duration.ZERO, Duration.ofMinutes(1)), "longest a pending increment waits for company before its flush starts")
    .formerly("maxDelayMs", ChronoUnit.MILLIS);
  public static final ConfigKey<Integer> MAX_KEYS = KEYS.define("maxKeys", LOW, INT, 1000, between(1, 10_000),
    "counters per flush: a coalescer holding this many flushes at once");
  /**
   * While the flushes in flight run, the next batch grows (group commit). With {@link #ADAPTIVE_IN_FLIGHT} a ceiling
   * for the measured rule; without, the number always kept. Each writer's slot lane and write pool are sized by it.
   */
  public static final ConfigKey<Integer> MAX_IN_FLIGHT = KEYS.define("maxInFlight", LOW, INT, 1, between(1, 64),
    "flushes in flight per coalescer (group commit); with `adaptiveInFlight`, the most it keeps; each writer's slot "
      + "lane and write pool are this + 1");
  /** Off by default: on 2 cores round 5 measured it less close to the best fixed setting than fixed 2 (docs/benchmarks.md). */
  public static final ConfigKey<Boolean> ADAPTIVE_IN_FLIGHT = KEYS.define("adaptiveInFlight", LOW, BOOLEAN, false, any(),
    "keep the number of flushes in flight, from 1 up to `maxInFlight`, that commits the most counts soonest "
      + "(measured, trying half and twice as many in turn); false keeps `maxInFlight` always");
  /** Far longer than any retry of an ambiguous flush can take, and ten heartbeats of an idle source at least. */
  public static final ConfigKey<Duration> FLUSH_ID_RETENTION = KEYS.define("flushIdRetention", LOW, DURATION,
    Duration.ofDays(1), between(Duration.ofMinutes(1), Duration.ofDays(365)), "a flush source silent this long is closed (an idle one beats every tenth of it, at "
      + "most every minute); its gateway, if alive, resolves its flushes by id and goes on under a new source; closed "
      + "this long again, it is deleted")
    .formerly("flushIdRetentionSeconds", ChronoUnit.SECONDS);
  public static final ConfigKey<Duration> PRUNE_INTERVAL = KEYS.define("pruneInterval", LOW, DURATION, Duration.ofMinutes(10),
    between(Duration.ofSeconds(1), Duration.ofDays(1)), "how often each gateway looks for dead flush sources")
    .formerly("pruneIntervalSeconds", ChronoUnit.SECONDS);
  /** Guards against a connection that silently stops answering; safe because a flush id makes the retry idempotent. */
  public static final ConfigKey<Duration> WRITE_TIMEOUT = KEYS.define("writeTimeout", LOW, DURATION, Duration.ofSeconds(15),
    between(Duration.ofMillis(100), Duration.ofMinutes(10)), "a write attempt unanswered by then is retried like a lost "
      + "connection")
    .formerly("writeTimeoutMs", ChronoUnit.MILLIS);
  /** Kafka's names: {@code retry.backoff.ms}, {@code retry.backoff.max.ms}. */
  public static final ConfigKey<Duration> RETRY_BACKOFF = KEYS.define("retryBackoff", LOW, DURATION, Duration.ofMillis(50),
    between(Duration.ofMillis(1), Duration.ofMinutes(1)), "first pause before retrying a failed write (lost connection, "
      + "deadlock, lock timeout); each next one doubles, up to `retryBackoffMax`")
    .formerly("retryInitialMs", ChronoUnit.MILLIS);
  public static final ConfigKey<Duration> RETRY_BACKOFF_MAX = KEYS.define("retryBackoffMax", LOW, DURATION,
    Duration.ofSeconds(2), between(Duration.ofMillis(1), Duration.ofMinutes(10)), "longest pause between write "
      + "retries; at least `retryBackoff`")
    .formerly("retryMaxMs", ChronoUnit.MILLIS);
  /**
   * A flush id must outlive every retry of its flush: an attempt lasts at most writeTimeout, the pause between two at
   * most retryBackoffMax. The retention must cover at least this many such retries; an outage longer than that is logged.
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
  private final boolean adaptiveInFlight;
  private final int flushIdRetentionSeconds;
  private final int pruneIntervalSeconds;
  private final int writeTimeoutMs;
  private final int retryInitialMs;
  private final int retryMaxMs;

  private BatchingOptions(ConfigSection section) {
    maxDelayMs = (int) section.get(MAX_DELAY).toMillis();
    maxKeys = section.get(MAX_KEYS);
    maxInFlight = section.get(MAX_IN_FLIGHT);
    adaptiveInFlight = section.get(ADAPTIVE_IN_FLIGHT);
    flushIdRetentionSeconds = (int) section.get(FLUSH_ID_RETENTION).toSeconds();
    pruneIntervalSeconds = (int) section.get(PRUNE_INTERVAL).toSeconds();
    writeTimeoutMs = (int) section.get(WRITE_TIMEOUT).toMillis();
    retryInitialMs = (int) section.get(RETRY_BACKOFF).toMillis();
    retryMaxMs = (int) section.get(RETRY_BACKOFF_MAX).toMillis();
  }

  static BatchingOptions from(ConfigSection section) {
    BatchingOptions options = new BatchingOptions(section);
    if (options.retryMaxMs < options.retryInitialMs) {
      throw new ConfigException(section.key(RETRY_BACKOFF_MAX), "must be at least " + section.key(RETRY_BACKOFF)
        + " (" + ConfigKey.durationText(Duration.ofMillis(options.retryInitialMs)) + ")");
    }
    long minRetentionSeconds = options.minFlushIdRetentionSeconds();
    if (options.flushIdRetentionSeconds < minRetentionSeconds) {
      throw new ConfigException(section.key(FLUSH_ID_RETENTION), "must be at least "
        + ConfigKey.durationText(Duration.ofSeconds(minRetentionSeconds)) + " (" + RETRIES_WITHIN_RETENTION
        + " retries of " + section.key(WRITE_TIMEOUT) + " + " + section.key(RETRY_BACKOFF_MAX) + "), got "
        + ConfigKey.durationText(Duration.ofSeconds(options.flushIdRetentionSeconds)));
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

  public boolean isAdaptiveInFlight() {
    return adaptiveInFlight;
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
   * The pause before retry {@code attemptNo + 1} of a write: exponential from retryBackoff, capped at retryBackoffMax, with
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
