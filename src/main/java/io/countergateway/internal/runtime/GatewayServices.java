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

  /** The same state, registry and rules over {@code changed} (a value the start learnt, such as the commit level). */
  public GatewayServices withConfig(GatewayConfig changed) {
    return new GatewayServices(changed, state, registry, rules);
  }

  public Clock clock() {
    return rules.clock();
  }
}
