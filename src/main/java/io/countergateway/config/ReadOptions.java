package io.countergateway.config;

import static io.countergateway.config.ConfigKey.INT;
import static io.countergateway.config.ConfigKey.between;

/** How reads are served. */
public final class ReadOptions {
  static final ConfigDef KEYS = ConfigDef.section("reads");
  public static final ConfigKey<Integer> INSTANCES = KEYS.define("instances", INT, 1, between(1, 64), "read verticles");
  public static final ConfigKey<Integer> CACHE_MILLIS = KEYS.define("cacheMillis", INT, 0, between(0, 3_600_000),
    "a read may be served from a value this many ms old (reads may then lag a commit); 0 always asks the database");
  /**
   * The cache's bound per read verticle: an entry (the key, the value, the map's node) takes ~150 bytes plus the id's
   * length, so the default holds at most ~25 MB at the longest ids; past the bound the cache starts afresh.
   */
  public static final ConfigKey<Integer> CACHE_MAX_COUNTERS = KEYS.define("cacheMaxCounters", INT, 100_000,
    between(1, 10_000_000), "counters each read verticle's cache holds at most (with cacheMillis > 0); past it the cache is emptied");
  /** Top-N and range reads scan many rows: a few at a time per namespace, so they cannot take every read connection. */
  public static final ConfigKey<Integer> MAX_HEAVY_PER_NAMESPACE = KEYS.define("maxHeavyPerNamespace", INT, 2,
    between(1, 1_000), "top-N and range queries of one namespace running at once per read verticle (more: 503 `reads_busy`)");

  private final int instances;
  private final int cacheMillis;
  private final int maxHeavyPerNamespace;
  private final int cacheMaxCounters;

  private ReadOptions(ConfigSection section) {
    instances = section.get(INSTANCES);
    cacheMillis = section.get(CACHE_MILLIS);
    maxHeavyPerNamespace = section.get(MAX_HEAVY_PER_NAMESPACE);
    cacheMaxCounters = section.get(CACHE_MAX_COUNTERS);
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

  /** Counters each read verticle's cache holds at most. */
  public int getCacheMaxCounters() {
    return cacheMaxCounters;
  }

  /** Top-N and range queries of one namespace running at once per read verticle. */
  public int getMaxHeavyPerNamespace() {
    return maxHeavyPerNamespace;
  }
}
