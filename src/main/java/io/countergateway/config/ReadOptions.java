package io.countergateway.config;

import java.time.Duration;
import java.time.temporal.ChronoUnit;

import static io.countergateway.config.ConfigKey.DURATION;
import static io.countergateway.config.ConfigKey.INT;
import static io.countergateway.config.ConfigKey.Importance.LOW;
import static io.countergateway.config.ConfigKey.Importance.MEDIUM;
import static io.countergateway.config.ConfigKey.between;

/** How reads are served. */
public final class ReadOptions {
  static final ConfigDef KEYS = ConfigDef.section("reads");

  static {
    KEYS.retired("cacheMaxCounters", "derived from the heap (docs/operations.md \"Sizing\")");
  }

  public static final ConfigKey<Integer> INSTANCES = KEYS.define("instances", LOW, INT, 1, between(1, 64), "read verticles");
  public static final ConfigKey<Duration> CACHE_MAX_AGE = KEYS.define("cacheMaxAge", MEDIUM, DURATION, Duration.ZERO,
    between(Duration.ZERO, Duration.ofHours(1)), "a read may be served from a value this old (reads may then lag a "
      + "commit); 0 always asks the database")
    .formerly("cacheMillis", ChronoUnit.MILLIS);
  /** Top-N and range reads scan many rows: a few at a time per namespace, so they cannot take every read connection. */
  public static final ConfigKey<Integer> MAX_HEAVY_PER_NAMESPACE = KEYS.define("maxHeavyPerNamespace", LOW, INT, 2,
    between(1, 1_000), "top-N and range queries of one namespace running at once per read verticle (more: 503 `reads_busy`)");

  private final int instances;
  private final int cacheMillis;
  private final int maxHeavyPerNamespace;

  private ReadOptions(ConfigSection section) {
    instances = section.get(INSTANCES);
    cacheMillis = (int) section.get(CACHE_MAX_AGE).toMillis();
    maxHeavyPerNamespace = section.get(MAX_HEAVY_PER_NAMESPACE);
  }

  static ReadOptions from(ConfigSection section) {
    return new ReadOptions(section);
  }

  public int getInstances() {
    return instances;
  }

  /** A read may be served from a value this many milliseconds old; 0 always asks the database. */
  public int getCacheMillis() {
    return cacheMillis;
  }

  /** Top-N and range queries of one namespace running at once per read verticle. */
  public int getMaxHeavyPerNamespace() {
    return maxHeavyPerNamespace;
  }
}
