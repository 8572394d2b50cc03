package io.countergateway.config;

/**
 * Replica lanes: every coalescer of every replica leases a lane number in {@code <table>_lanes} and writes only the
 * slots of its lane, so concurrent writers never share a slot row. A replica that stops heartbeating loses its
 * lanes after {@code leaseMs}.
 */
public class LaneOptions {
  public static final int DEFAULT_LEASE_MS = 15_000;

  private boolean enabled = true;
  private int leaseMs = DEFAULT_LEASE_MS;

  static LaneOptions from(ConfigSection section) {
    return new LaneOptions()
      .setEnabled(section.boolValue("enabled", true))
      .setLeaseMs(section.intValue("leaseMs", DEFAULT_LEASE_MS));
  }

  public boolean isEnabled() {
    return enabled;
  }

  /** Off: each replica picks a random lane offset, as before lanes (two replicas may then share slot rows). */
  public LaneOptions setEnabled(boolean enabled) {
    this.enabled = enabled;
    return this;
  }

  public int getLeaseMs() {
    return leaseMs;
  }

  /** How long a lane stays leased without a heartbeat; heartbeats run every third of it. */
  public LaneOptions setLeaseMs(int leaseMs) {
    this.leaseMs = Checks.range("lanes.leaseMs", leaseMs, 300, 600_000);
    return this;
  }
}
