package io.countergateway.internal.metrics;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.config.MeterFilterReply;
import io.vertx.core.Vertx;
import io.vertx.core.VertxBuilder;
import io.vertx.core.VertxOptions;
import io.vertx.micrometer.Label;
import io.vertx.micrometer.MetricsDomain;
import io.vertx.micrometer.MicrometerMetricsFactory;
import io.vertx.micrometer.MicrometerMetricsOptions;

import java.util.EnumSet;
import java.util.Set;

/**
 * Vert.x's own meters (the metrics SPI through vertx-micrometer-metrics) in the gateway's registry: SQL and worker
 * pool usage and wait, and the JVM binders (memory, GC, threads, CPU). HTTP requests are counted by
 * {@link HttpRouteMeters}. No label can carry a counter id: pools are labelled by type and name only.
 */
public final class VertxMetrics {
  /**
   * Three of Micrometer's JVM meters break Prometheus's naming rules as {@code promtool check metrics} states them
   * (time not in seconds, a {@code _count} suffix on a gauge): the CPU time is exported in seconds instead
   * ({@code process_cpu_seconds_total}, Prometheus's usual name), the JIT's compile time is left out, the
   * processor count renamed.
   */
  static final MeterFilter PROMETHEUS_NAMES = new MeterFilter() {
    @Override
    public MeterFilterReply accept(Meter.Id id) {
      return id.getName().equals("jvm.compilation.time") || id.getName().equals("process.cpu.time")
        ? MeterFilterReply.DENY : MeterFilterReply.NEUTRAL;
    }

    @Override
    public Meter.Id map(Meter.Id id) {
      return id.getName().equals("system.cpu.count") ? id.withName("system.cpu.available") : id;
    }
  };

  private VertxMetrics() {
  }

  public static MicrometerMetricsOptions options() {
    return new MicrometerMetricsOptions().setEnabled(true).setJvmMetricsEnabled(true)
      .setLabels(EnumSet.of(Label.POOL_TYPE, Label.POOL_NAME))
      // vertx-micrometer-metrics looks these meters up in the registry by their tags on every request, message or
      // socket read, which costs the hot routes a sixth of their throughput (a JFR profile of beacons): HTTP requests are
      // counted by HttpRouteMeters instead, at a fraction of the cost; per-socket bytes and event-bus messages are
      // left out (the gateway's own meters count the increments they carry, and nothing alerts on them)
      .setDisabledMetricsCategories(Set.of(MetricsDomain.HTTP_SERVER.toCategory(), MetricsDomain.NET_SERVER.toCategory(),
        MetricsDomain.EVENT_BUS.toCategory()));
  }

  /** A builder whose Vert.x reports into {@code registry}; build it local or clustered. */
  public static VertxBuilder builder(MeterRegistry registry) {
    registry.config().meterFilter(PROMETHEUS_NAMES);
    ProcessMeters.register(registry);
    return Vertx.builder().with(new VertxOptions().setMetricsOptions(options()).setPreferNativeTransport(true))
      .withMetrics(new MicrometerMetricsFactory(registry));
  }
}
