package io.countergateway.config;

/**
 * {@code uniques}: how the distinct-visitor sketches of {@code unique: true} namespaces are kept. {@code lgK} sets a
 * sketch's 2^lgK registers: 12 (the default) gives a relative standard error of about 1.6 % (3.2 % at two sigmas)
 * in 2 KiB per stored sketch; each step up divides the error by √2 and doubles the bytes.
 */
public final class UniquesOptions {
  public static final int DEFAULT_LG_K = 12;
  public static final int DEFAULT_FLUSH_INTERVAL_MS = 1_000;
  public static final int DEFAULT_MAX_PENDING_SKETCHES = 10_000;

  private final int lgK;
  private final int flushIntervalMs;
  private final int maxPendingSketches;

  public UniquesOptions(int lgK, int flushIntervalMs, int maxPendingSketches) {
    this.lgK = Checks.range("uniques.lgK", lgK, 4, 21);
    this.flushIntervalMs = Checks.range("uniques.flushIntervalMs", flushIntervalMs, 10, 60_000);
    this.maxPendingSketches = Checks.range("uniques.maxPendingSketches", maxPendingSketches, 1, 1_000_000);
  }

  static UniquesOptions from(ConfigSection section) {
    return new UniquesOptions(section.intValue("lgK", DEFAULT_LG_K),
      section.intValue("flushIntervalMs", DEFAULT_FLUSH_INTERVAL_MS),
      section.intValue("maxPendingSketches", DEFAULT_MAX_PENDING_SKETCHES));
  }

  public static UniquesOptions defaults() {
    return new UniquesOptions(DEFAULT_LG_K, DEFAULT_FLUSH_INTERVAL_MS, DEFAULT_MAX_PENDING_SKETCHES);
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
}
