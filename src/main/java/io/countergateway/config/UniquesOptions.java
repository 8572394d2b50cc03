package io.countergateway.config;

import java.time.Duration;
import java.time.temporal.ChronoUnit;

import static io.countergateway.config.ConfigKey.DURATION;
import static io.countergateway.config.ConfigKey.INT;
import static io.countergateway.config.ConfigKey.Importance.LOW;
import static io.countergateway.config.ConfigKey.Importance.MEDIUM;
import static io.countergateway.config.ConfigKey.between;

/**
 * {@code uniques}: how the distinct-visitor sketches of {@code unique: true} namespaces are kept. {@code lgK} sets a
 * sketch's 2^lgK registers: 12 (the default) gives a relative standard error of about 1.6 % (3.2 % at two sigmas)
 * in 2 KiB per stored sketch; each step up divides the error by √2 and doubles the bytes.
 */
public final class UniquesOptions {
  static final ConfigDef KEYS = ConfigDef.section("uniques");

  static {
    KEYS.retired("maxPendingSketches", "derived from the heap (docs/operations.md \"Sizing\")");
    KEYS.retired("newSketchesPerClientPerMinute", "many visitors share one address; the new sketches a client opens "
      + "are bounded by the beacons' budgets of new ids (beacon.idsPerClientPerHour, beacon.newIdsPerHour)");
  }

  public static final ConfigKey<Integer> LG_K = KEYS.define("lgK", MEDIUM, INT, 12, between(4, 21),
    "sketch size: 2^lgK registers, error ≈ 1.04/√2^lgK (12: ~1.6 % in 2 KiB per sketch row)");
  public static final ConfigKey<Duration> FLUSH_INTERVAL = KEYS.define("flushInterval", LOW, DURATION, Duration.ofSeconds(1),
    between(Duration.ofMillis(10), Duration.ofMinutes(1)), "how often each ingest verticle merges its sketches into "
      + "`<table>_uniques`")
    .formerly("flushIntervalMs", ChronoUnit.MILLIS);

  private final int lgK;
  private final int flushIntervalMs;

  private UniquesOptions(ConfigSection section) {
    lgK = section.get(LG_K);
    flushIntervalMs = (int) section.get(FLUSH_INTERVAL).toMillis();
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
}
