package io.countergateway.internal.rollup;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;

/** The meters of one roll-up on this replica; the lag is read from the database, so every replica reports it. */
final class RollupMetrics {
  private final Counter runs;
  private final Counter counters;
  private final Counter missingRows;
  private volatile double lastRunSeconds = Double.NaN;
  private volatile double lagSeconds = Double.NaN;

  RollupMetrics(MeterRegistry registry, String namespace) {
    Tags tags = Tags.of("namespace", namespace);
    runs = Counter.builder("gateway.rollup.runs").tags(tags)
      .description("complete roll-up runs made by this replica").register(registry);
    counters = Counter.builder("gateway.rollup.counters").tags(tags)
      .description("counters whose total this replica wrote into the application's table").register(registry);
    missingRows = Counter.builder("gateway.rollup.missing.rows").tags(tags)
      .description("changed counters without a row in the application's table (not created)").register(registry);
    Gauge.builder("gateway.rollup.last.run.seconds", this, m -> m.lastRunSeconds).tags(tags)
      .description("duration of this replica's last complete roll-up run").register(registry);
    Gauge.builder("gateway.rollup.lag.seconds", this, m -> m.lagSeconds).tags(tags)
      .description("seconds since the start of the last complete roll-up run on any replica; "
        + "increments older than that are in the application's table").register(registry);
  }

  void record(Rollup.Run run) {
    if (run.ran()) {
      runs.increment();
      counters.increment(run.counters());
      missingRows.increment(run.missingRows());
      lastRunSeconds = (run.finishedNanos() - run.startedNanos()) / 1e9;
    }
  }

  void lag(Double seconds) {
    lagSeconds = seconds == null ? Double.NaN : seconds;
  }
}
