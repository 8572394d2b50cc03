package io.countergateway.config;

import java.time.Duration;
import java.time.temporal.ChronoUnit;

import static io.countergateway.config.ConfigKey.DURATION;
import static io.countergateway.config.ConfigKey.Importance.LOW;
import static io.countergateway.config.ConfigKey.between;

/**
 * Replica lanes: every coalescer of every replica leases a lane number in {@code <table>_lanes} and writes only the
 * slots of its lane, so concurrent writers never share a slot row. A replica that stops heartbeating loses its
 * lanes after {@code lease}.
 */
public final class LaneOptions {
  static final ConfigDef KEYS = ConfigDef.section("lanes");

  static {
    KEYS.retired("enabled", "replica lanes are always leased (docs/scaling.md \"Replica lanes\")");
  }

  /** Heartbeats run every third of it. */
  public static final ConfigKey<Duration> LEASE = KEYS.define("lease", LOW, DURATION, Duration.ofSeconds(15),
    between(Duration.ofMillis(300), Duration.ofMinutes(10)), "a replica's lanes are free again this long after its last "
      + "heartbeat")
    .formerly("leaseMs", ChronoUnit.MILLIS);

  private final int leaseMs;

  private LaneOptions(ConfigSection section) {
    leaseMs = (int) section.get(LEASE).toMillis();
  }

  static LaneOptions from(ConfigSection section) {
    return new LaneOptions(section);
  }

  /** How long a lane stays leased without a heartbeat; heartbeats run every third of it. */
  public int getLeaseMs() {
    return leaseMs;
  }
}
