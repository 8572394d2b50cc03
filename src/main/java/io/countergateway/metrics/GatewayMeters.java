package io.countergateway.metrics;

import io.countergateway.runtime.GatewayState;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

/** The gateway-wide state as gauges, so dashboards and alerts see what {@code /health/ready} decides on. */
public final class GatewayMeters {
  private GatewayMeters() {
  }

  public static void register(MeterRegistry registry, GatewayState state) {
    Gauge.builder("gateway.ready", state, s -> s.isReady() ? 1 : 0)
      .description("1 while the gateway takes increments (not draining, no coalescer failing or shedding); "
        + "the database ping of /health/ready aside").register(registry);
    Gauge.builder("gateway.writers.failing", state, GatewayState::failingWriters)
      .description("coalescers whose flushes currently fail and are being retried (database outage)").register(registry);
    Gauge.builder("gateway.writers.shedding", state, GatewayState::sheddingWriters)
      .description("coalescers currently refusing new increments with 503 because they are full").register(registry);
  }
}
