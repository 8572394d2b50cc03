package io.countergateway.bench;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;

/** A whole run: where and how it was measured, and one {@link StrategyResult} per strategy. */
public final class RunReport {
  private final BenchOptions options;
  private final String commandLine;
  private final String databaseVersion;
  private final int cores;
  private final OffsetDateTime date;
  private final List<StrategyResult> results = new ArrayList<>();

  RunReport(BenchOptions options, String commandLine, String databaseVersion, int cores, OffsetDateTime date) {
    this.options = options;
    this.commandLine = commandLine;
    this.databaseVersion = databaseVersion;
    this.cores = cores;
    this.date = date;
  }

  void add(StrategyResult result) {
    results.add(result);
  }

  public List<StrategyResult> results() {
    return Collections.unmodifiableList(results);
  }

  public Optional<StrategyResult> result(String name) {
    return results.stream().filter(r -> r.name().equals(name)).findFirst();
  }

  /** True when no strategy failed or read back wrong values. */
  public boolean passed() {
    return results.stream().noneMatch(StrategyResult::failedRun);
  }

  public BenchOptions options() {
    return options;
  }

  public String commandLine() {
    return commandLine;
  }

  public String databaseVersion() {
    return databaseVersion;
  }

  public int cores() {
    return cores;
  }

  public OffsetDateTime date() {
    return date;
  }

  /** One line saying what was measured where. */
  public String headline() {
    return options.dialect().label() + " at " + options.host() + ":" + options.port() + ", "
      + options.concurrency() + " writers, " + options.counters() + (options.counters() == 1 ? " counter" : " counters")
      + (options.counters() > 1 ? " (uniform)" : "") + ", " + seconds(options.duration().toMillis())
      + " per strategy after " + seconds(options.warmup().toMillis()) + " warm-up"
      + (options.readMix() ? ", " + options.readers() + " readers of counter 0" : "");
  }

  private static String seconds(long millis) {
    return millis % 1000 == 0 ? millis / 1000 + " s" : millis / 1000.0 + " s";
  }

  public JsonObject toJson() {
    JsonArray rows = new JsonArray();
    results.forEach(r -> rows.add(r.toJson()));
    return new JsonObject()
      .put("command", commandLine)
      .put("date", date.toString())
      .put("cores", cores)
      .put("java", System.getProperty("java.vm.name") + " " + System.getProperty("java.version"))
      .put("database", new JsonObject().put("kind", options.dialect().gatewayKind()).put("version", databaseVersion)
        .put("host", options.host()).put("port", options.port()).put("name", options.database()))
      .put("options", new JsonObject()
        .put("concurrency", options.concurrency()).put("durationMs", options.duration().toMillis())
        .put("warmupMs", options.warmup().toMillis()).put("counters", options.counters())
        .put("slots", options.slots()).put("readMix", options.readMix()).put("readers", options.readers())
        .put("busWindow", options.busWindow()).put("batchSize", options.batchSize())
        .put("foldIntervalMs", options.foldInterval().toMillis()).put("gatewaySlots", options.gatewaySlots())
        .put("gatewaySettings", new JsonObject(new java.util.LinkedHashMap<String, Object>(options.gatewaySettings()))))
      .put("passed", passed())
      .put("results", rows)
      .put("targets", Targets.toJson(this));
  }
}
