package io.countergateway.internal.runtime;

import io.countergateway.config.GatewayConfig;
import io.countergateway.internal.model.IncrementRules;
import io.micrometer.core.instrument.MeterRegistry;

import java.time.Clock;

/**
 * What every verticle of one gateway shares: the validated config, the readiness state, the metrics registry, and the
 * input rules with the gateway's UTC clock (injectable, so tests can cross a bucket boundary of a windowed namespace).
 */
public record GatewayServices(GatewayConfig config, GatewayState state, MeterRegistry registry, IncrementRules rules) {
  public GatewayServices(GatewayConfig config, GatewayState state, MeterRegistry registry) {
    this(config, state, registry, Clock.systemUTC());
  }

  public GatewayServices(GatewayConfig config, GatewayState state, MeterRegistry registry, Clock clock) {
    this(config, state, registry, new IncrementRules(config, clock));
  }

  public Clock clock() {
    return rules.clock();
  }
}
