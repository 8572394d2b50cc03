package io.countergateway;

import io.countergateway.config.GatewayConfig;
import io.countergateway.model.IncrementRules;
import io.micrometer.core.instrument.MeterRegistry;

/** What every verticle of one gateway shares: the validated config, the readiness state, the metrics registry. */
public record GatewayServices(GatewayConfig config, GatewayState state, MeterRegistry registry, IncrementRules rules) {
  public GatewayServices(GatewayConfig config, GatewayState state, MeterRegistry registry) {
    this(config, state, registry, new IncrementRules(config));
  }
}
