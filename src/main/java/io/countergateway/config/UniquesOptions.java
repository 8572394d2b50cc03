package io.countergateway.config;

import static io.countergateway.config.ConfigKey.INT;
import static io.countergateway.config.ConfigKey.between;

/**
 * {@code uniques}: how the distinct-visitor sketches of {@code unique: true} namespaces are kept. {@code lgK} sets a
 * sketch's 2^lgK registers: 12 (the default) gives a relative standard error of about 1.6 % (3.2 % at two sigmas)
 * in 2 KiB per stored sketch; each step up divides the error by √2 and doubles the bytes.
 */
public final class UniquesOptions {
  static final ConfigDef KEYS = ConfigDef.section("uniques");
  public static final ConfigKey<Integer> LG_K = KEYS.define("lgK", INT, 12, between(4, 21),
    "sketch size: 2^lgK registers, error ≈ 1.04/√2^lgK (12: ~1.6 % in 2 KiB per sketch row)");
  public static final ConfigKey<Integer> FLUSH_INTERVAL_MS = KEYS.define("flushIntervalMs", INT, 1_000,
    between(10, 60_000), "how often each ingest verticle merges its sketches into `<table>_uniques`");
  /**
   * See the README on what happens when full. ~2.1 KiB a sketch at lgK 12, held up to 3.75 times over while a merge
   * is in flight (MemoryBudget): ~16 MB per verticle, sized with the other bounds to fit the heap of
   * conf/jvm.options. A full verticle merges early, so the cap bounds memory, not what is counted.
   */
  public static final ConfigKey<Integer> MAX_PENDING_SKETCHES = KEYS.define("maxPendingSketches", INT, 2_000,
    between(1, 1_000_000), "counter-buckets one ingest verticle may hold sketches for between merges");
  public static final ConfigKey<Integer> NEW_SKETCHES_PER_CLIENT = KEYS.define("newSketchesPerClientPerMinute", INT, 60,
    between(1, 1_000_000), "new counter-buckets one client address may open per minute per ingest verticle");

  private final int lgK;
  private final int flushIntervalMs;
  private final int maxPendingSketches;
  private final int newSketchesPerClientPerMinute;

  private UniquesOptions(ConfigSection section) {
    lgK = section.get(LG_K);
    flushIntervalMs = section.get(FLUSH_INTERVAL_MS);
    maxPendingSketches = section.get(MAX_PENDING_SKETCHES);
    newSketchesPerClientPerMinute = section.get(NEW_SKETCHES_PER_CLIENT);
  }

  static UniquesOptions from(ConfigSection section) {
    return new UniquesOptions(section);
  }

  public int getLgK() {
    return lgK;
  }

  /** How often each ingest verticle merges the sketches it holds into the database. */
  public int getFlushIntervalMs() {
    return flushIntervalMs;
  }

  /** Counter-buckets one ingest verticle may hold sketches for between flushes; see the README on what happens when full. */
  public int getMaxPendingSketches() {
    return maxPendingSketches;
  }

  /** New counter-buckets one client address may open per minute per ingest verticle; past it its visits join no new sketch. */
  public int getNewSketchesPerClientPerMinute() {
    return newSketchesPerClientPerMinute;
  }
}
