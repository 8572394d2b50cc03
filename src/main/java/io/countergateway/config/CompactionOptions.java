package io.countergateway.config;

import io.vertx.core.json.JsonObject;

import static io.countergateway.config.ConfigKey.BOOLEAN;
import static io.countergateway.config.ConfigKey.INT;
import static io.countergateway.config.ConfigKey.any;
import static io.countergateway.config.ConfigKey.between;

/** Folding the slot rows of counters nobody writes any more into one row each. */
public final class CompactionOptions {
  static final ConfigDef KEYS = ConfigDef.section("compaction");
  public static final ConfigKey<Boolean> ENABLED = KEYS.define("enabled", BOOLEAN, false, any(),
    "fold the slot rows of idle counters into one row each");
  public static final ConfigKey<Integer> IDLE_SECONDS = KEYS.define("idleSeconds", INT, 86_400, between(1, 31_536_000),
    "a counter none of whose slot rows was written for this long is folded");
  public static final ConfigKey<Integer> INTERVAL_SECONDS = KEYS.define("intervalSeconds", INT, 300, between(1, 86_400),
    "how often compaction looks for idle counters");
  /** Small, so flushes barely wait. */
  public static final ConfigKey<Integer> BATCH_SIZE = KEYS.define("batchSize", INT, 100, between(1, 10_000),
    "counters folded per statement (PostgreSQL) or transaction (MySQL)");

  private final boolean enabled;
  private final int idleSeconds;
  private final int intervalSeconds;
  private final int batchSize;

  private CompactionOptions(ConfigSection section) {
    enabled = section.get(ENABLED);
    idleSeconds = section.get(IDLE_SECONDS);
    intervalSeconds = section.get(INTERVAL_SECONDS);
    batchSize = section.get(BATCH_SIZE);
  }

  static CompactionOptions from(ConfigSection section) {
    return new CompactionOptions(section);
  }

  /** Options from a mapping as the file's {@code compaction} section would hold it (tests, tools). */
  public static CompactionOptions fromJson(JsonObject json) {
    return ConfigSection.read(json, KEYS.pattern(), CompactionOptions::from);
  }

  public boolean isEnabled() {
    return enabled;
  }

  /** A counter none of whose slot rows was written for this long is folded into one row. */
  public int getIdleSeconds() {
    return idleSeconds;
  }

  public int getIntervalSeconds() {
    return intervalSeconds;
  }

  /** Counters folded per statement (PostgreSQL) or transaction (MySQL): small, so flushes barely wait. */
  public int getBatchSize() {
    return batchSize;
  }
}
