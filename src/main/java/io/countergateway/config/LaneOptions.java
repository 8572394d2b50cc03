package io.countergateway.config;

import static io.countergateway.config.ConfigKey.BOOLEAN;
import static io.countergateway.config.ConfigKey.INT;
import static io.countergateway.config.ConfigKey.any;
import static io.countergateway.config.ConfigKey.between;

/**
 * Replica lanes: every coalescer of every replica leases a lane number in {@code <table>_lanes} and writes only the
 * slots of its lane, so concurrent writers never share a slot row. A replica that stops heartbeating loses its
 * lanes after {@code leaseMs}.
 */
public final class LaneOptions {
  static final ConfigDef KEYS = ConfigDef.section("lanes");
  /** Off: each replica picks a random lane offset, as before lanes (two replicas may then share slot rows). */
  public static final ConfigKey<Boolean> ENABLED = KEYS.define("enabled", BOOLEAN, true, any(),
    "each ingest verticle of each replica leases a lane of slots in `<table>_lanes` (see *Replica lanes*)");
  /** Heartbeats run every third of it. */
  public static final ConfigKey<Integer> LEASE_MS = KEYS.define("leaseMs", INT, 15_000, between(300, 600_000),
    "a replica's lanes are free again this long after its last heartbeat");

  private final boolean enabled;
  private final int leaseMs;

  private LaneOptions(ConfigSection section) {
    enabled = section.get(ENABLED);
    leaseMs = section.get(LEASE_MS);
  }

  static LaneOptions from(ConfigSection section) {
    return new LaneOptions(section);
  }

  /** Off: each replica picks a random lane offset, as before lanes (two replicas may then share slot rows). */
  public boolean isEnabled() {
    return enabled;
  }

  /** How long a lane stays leased without a heartbeat; heartbeats run every third of it. */
  public int getLeaseMs() {
    return leaseMs;
  }
}
