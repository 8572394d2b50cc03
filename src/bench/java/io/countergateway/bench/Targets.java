package io.countergateway.bench;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** The targets of src/DESIGN.md §7, as far as one run can tell them: ratios between rows of the same run, and absolute rates. */
final class Targets {
  /** One target: what was measured against what was asked. */
  record Target(String id, String what, String measured, String target, boolean met) {
    JsonObject toJson() {
      return new JsonObject().put("id", id).put("what", what).put("measured", measured).put("target", target)
        .put("met", met);
    }
  }

  private Targets() {
  }

  static List<Target> of(RunReport report) {
    List<Target> targets = new ArrayList<>();
    boolean hot = report.options().counters() == 1;
    Optional<StrategyResult> http = measured(report, "gateway-http");
    if (hot && http.isPresent()) {
      double gateway = http.get().incrementsPerSecond();
      measured(report, "plain-204").ifPresent(plain -> targets.add(ratio("T1", "gateway-http / plain-204",
        gateway, plain.incrementsPerSecond(), 0.75)));
      measured(report, "single-row").ifPresent(single -> targets.add(ratio("T1", "gateway-http / single-row UPDATE",
        gateway, single.incrementsPerSecond(), report.options().dialect().isPostgres() ? 50 : 10)));
      measured(report, "redis").ifPresent(redis -> targets.add(ratio("T1", "gateway-http / Redis INCRBY",
        gateway, redis.incrementsPerSecond(), 1)));
      if (report.options().readMix()) {
        StrategyResult r = http.get();
        targets.add(new Target("T5", "reads of the hot counter during gateway-http",
          String.format("%,.0f reads/s, p99 %.2f ms", r.readsPerSecond(), r.readP99Ms()), ">= 20,000 reads/s, p99 <= 10 ms",
          r.readsPerSecond() >= 20_000 && r.readP99Ms() <= 10));
      }
    }
    measured(report, "gateway-http-batch").ifPresent(batch -> targets.add(absolute("T2",
      "gateway-http-batch, " + report.options().batchSize() + " increments/request", batch.incrementsPerSecond(), 1_000_000)));
    measured(report, "gateway-bus").ifPresent(bus -> targets.add(absolute("T3",
      "gateway-bus, " + bus.writers() + " in-process senders", bus.incrementsPerSecond(), 2_000_000)));
    measured(report, "gateway-bus-batch").ifPresent(bus -> targets.add(absolute("T3",
      "gateway-bus-batch, " + bus.writers() + " in-process senders, " + report.options().batchSize() + " increments/message",
      bus.incrementsPerSecond(), 2_000_000)));
    return targets;
  }

  static JsonArray toJson(RunReport report) {
    JsonArray array = new JsonArray();
    of(report).forEach(t -> array.add(t.toJson()));
    return array;
  }

  private static Optional<StrategyResult> measured(RunReport report, String name) {
    return report.result(name).filter(StrategyResult::measured).filter(r -> r.incrementsPerSecond() > 0);
  }

  private static Target ratio(String id, String what, double value, double base, double atLeast) {
    double ratio = base == 0 ? 0 : value / base;
    return new Target(id, what, String.format("%,.0f / %,.0f = %.2f x", value, base, ratio),
      String.format(">= %s x", atLeast % 1 == 0 ? String.valueOf((long) atLeast) : String.valueOf(atLeast)),
      ratio >= atLeast);
  }

  private static Target absolute(String id, String what, double value, double atLeast) {
    return new Target(id, what, String.format("%,.0f increments/s", value), String.format(">= %,.0f increments/s", atLeast),
      value >= atLeast);
  }
}
