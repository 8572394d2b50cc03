package io.countergateway.internal.logging;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.turbo.TurboFilter;
import ch.qos.logback.core.spi.FilterReply;
import org.slf4j.Marker;

/**
 * Drops Micrometer's warning that a {@code vertx.*} gauge "has been already registered". vertx-micrometer-metrics
 * registers a gauge again for every pool and client of the same name (the SQL pools of one purpose, one per verticle)
 * and shares one counter between them by design, so nothing is lost; Micrometer 1.14+ still warns at every start
 * (vert-x3/vertx-micrometer-metrics#259, micrometer-metrics/micrometer#6931). The gateway's own meters are registered
 * once each and are not matched here. Installed by {@code logback.xml}.
 */
public final class VertxGaugeReRegistrations extends TurboFilter {
  private static final String REGISTRY_LOGGER = "io.micrometer.core.instrument.MeterRegistry";
  private static final String VERTX_METER = "MeterId{name='vertx.";

  @Override
  public FilterReply decide(Marker marker, Logger logger, Level level, String format, Object[] params, Throwable t) {
    return level == Level.WARN && format != null && REGISTRY_LOGGER.equals(logger.getName())
      && format.contains("already registered") && format.contains(VERTX_METER) ? FilterReply.DENY : FilterReply.NEUTRAL;
  }
}
