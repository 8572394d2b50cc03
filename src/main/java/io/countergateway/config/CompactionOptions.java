package io.countergateway.config;

import java.time.Duration;
import java.time.temporal.ChronoUnit;

import io.vertx.core.json.JsonObject;

import static io.countergateway.config.ConfigKey.BOOLEAN;
import static io.countergateway.config.ConfigKey.DURATION;
import static io.countergateway.config.ConfigKey.INT;
import static io.countergateway.config.ConfigKey.Importance.LOW;
import static io.countergateway.config.ConfigKey.Importance.MEDIUM;
import static io.countergateway.config.ConfigKey.any;
import static io.countergateway.config.ConfigKey.between;

/** Folding the slot rows of counters nobody writes any more into one row each. */
public final class CompactionOptions {
  static final ConfigDef KEYS = ConfigDef.section("compaction");
  public static final ConfigKey<Boolean> ENABLED = KEYS.define("enabled", MEDIUM, BOOLEAN, false, any(),
    "fold the slot rows of idle counters into one row each");
  public static final ConfigKey<Duration> IDLE_AFTER = KEYS.define("idleAfter", MEDIUM, DURATION, Duration.ofDays(1),
    between(Duration.ofSeconds(1), Duration.ofDays(365)), "a counter none of whose slot rows was written for this long is folded")
    .formerly("idleSeconds", ChronoUnit.SECONDS);
  public static final ConfigKey<Duration> INTERVAL = KEYS.define("interval", LOW, DURATION, Duration.ofMinutes(5),
    between(Duration.ofSeconds(1), Duration.ofDays(1)), "how often compaction looks for idle counters")
    .formerly("intervalSeconds", ChronoUnit.SECONDS);
  /** Small, so flushes barely wait. */
  public static final ConfigKey<Integer> BATCH_SIZE = KEYS.define("batchSize", LOW, INT, 100, between(1, 10_000),
    "counters folded per statement (PostgreSQL) or transaction (MySQL)");

  private final boolean enabled;
  private final int idleSeconds;
  private final int intervalSeconds;
  private final int batchSize;

  private CompactionOptions(ConfigSection section) {
    enabled = section.get(ENABLED);
    idleSeconds = (int) section.get(IDLE_AFTER).toSeconds();
    intervalSeconds = (int) section.get(INTERVAL).toSeconds();
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
