package io.countergateway.internal.metrics;

import io.countergateway.internal.runtime.GatewayState;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

import java.util.Collection;

/** The gateway-wide state as gauges, so dashboards and alerts see what {@code /health/ready} decides on. */
public final class GatewayMeters {
  private GatewayMeters() {
  }

  /** {@code namespaces}: the declared ones, each with its count of increments taken. */
  public static void register(MeterRegistry registry, GatewayState state, Collection<String> namespaces) {
    for (String namespace : namespaces) {
      FunctionCounter.builder("gateway.namespace.increments", state.taken(), taken -> taken.taken(namespace))
        .tag("namespace", namespace)
        .description("increments taken per namespace (a batch counts once per counter it changes); its rate is the "
          + "namespace's live increment rate").register(registry);
    }
    Gauge.builder("gateway.ready", state, s -> s.isReady() ? 1 : 0)
      .description("1 while the gateway takes increments (not draining, no coalescer failing or shedding); "
        + "the database ping of /health/ready aside").register(registry);
    Gauge.builder("gateway.writers.failing", state, GatewayState::failingWriters)
      .description("coalescers whose flushes currently fail and are being retried (database outage)").register(registry);
    Gauge.builder("gateway.writers.shedding", state, GatewayState::sheddingWriters)
      .description("coalescers currently refusing new increments with 503 because they are full").register(registry);
  }
}
