package io.countergateway.internal.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Handler;
import io.vertx.ext.web.RoutingContext;
import io.vertx.micrometer.PrometheusScrapingHandler;

/**
 * The {@code /metrics} handler when the gateway's registry is Prometheus's. micrometer-registry-prometheus and
 * vertx-micrometer-metrics are optional dependencies of the library jar: an application that embeds the gateway
 * without them gets no {@code /metrics} route, and this class is the only one that names their types, in a nested
 * class loaded only once both are known to be there.
 */
public final class PrometheusScrape {
  private static final boolean AVAILABLE = present("io.micrometer.prometheusmetrics.PrometheusMeterRegistry")
    && present("io.vertx.micrometer.PrometheusScrapingHandler");

  private PrometheusScrape() {
  }

  /** The scrape handler for {@code registry}, or null when it is not a Prometheus registry. */
  public static Handler<RoutingContext> handlerOrNull(MeterRegistry registry) {
    return AVAILABLE ? Prometheus.handlerOrNull(registry) : null;
  }

  private static boolean present(String className) {
    try {
      Class.forName(className, false, PrometheusScrape.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  private static final class Prometheus {
    static Handler<RoutingContext> handlerOrNull(MeterRegistry registry) {
      return registry instanceof PrometheusMeterRegistry prometheus ? PrometheusScrapingHandler.create(prometheus) : null;
    }
  }
}
