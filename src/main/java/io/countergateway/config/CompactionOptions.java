package io.countergateway.config;

/** Folding the slot rows of counters nobody writes any more into one row each. */
public class CompactionOptions {
  public static final int DEFAULT_IDLE_SECONDS = 86_400;
  public static final int DEFAULT_INTERVAL_SECONDS = 300;
  public static final int DEFAULT_BATCH_SIZE = 100;

  private boolean enabled;
  private int idleSeconds = DEFAULT_IDLE_SECONDS;
  private int intervalSeconds = DEFAULT_INTERVAL_SECONDS;
  private int batchSize = DEFAULT_BATCH_SIZE;

  static CompactionOptions from(ConfigSection section) {
    return new CompactionOptions()
      .setEnabled(section.boolValue("enabled", false))
      .setIdleSeconds(section.intValue("idleSeconds", DEFAULT_IDLE_SECONDS))
      .setIntervalSeconds(section.intValue("intervalSeconds", DEFAULT_INTERVAL_SECONDS))
      .setBatchSize(section.intValue("batchSize", DEFAULT_BATCH_SIZE));
  }

  public boolean isEnabled() {
    return enabled;
  }

  public CompactionOptions setEnabled(boolean enabled) {
    this.enabled = enabled;
    return this;
  }

  public int getIdleSeconds() {
    return idleSeconds;
  }

  /** A counter none of whose slot rows was written for this long is folded into one row. */
  public CompactionOptions setIdleSeconds(int idleSeconds) {
    this.idleSeconds = Checks.range("compaction.idleSeconds", idleSeconds, 1, 31_536_000);
    return this;
  }

  public int getIntervalSeconds() {
    return intervalSeconds;
  }

  public CompactionOptions setIntervalSeconds(int intervalSeconds) {
    this.intervalSeconds = Checks.range("compaction.intervalSeconds", intervalSeconds, 1, 86_400);
    return this;
  }

  public int getBatchSize() {
    return batchSize;
  }

  /** Counters folded per statement (PostgreSQL) or transaction (MySQL): small, so flushes barely wait. */
  public CompactionOptions setBatchSize(int batchSize) {
    this.batchSize = Checks.range("compaction.batchSize", batchSize, 1, 10_000);
    return this;
  }
}
