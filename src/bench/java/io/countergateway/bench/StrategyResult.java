package io.countergateway.bench;

import io.vertx.core.json.JsonObject;

/** One row of the results: what a strategy did in the measured window, and whether its counters add up. */
public record StrategyResult(
  String name, String title, boolean durable, Status status, int writers, double seconds,
  long increments, double incrementsPerSecond, double p50Ms, double p99Ms, double maxMs,
  long writeStatements, long readStatements, long acknowledged, long failed, long unknown,
  long reads, double readsPerSecond, double readP99Ms, long readErrors, String check, String note) {

  /** How the row ended. */
  public enum Status {
    /** Measured, and the values read back match the acknowledged increments. */
    OK,
    /** Measured; nothing to read back (the plain 204 server). */
    NOT_CHECKED,
    /** Could not run here (Redis not reachable); not a failure. */
    SKIPPED,
    /** The values read back do not match: the run fails. */
    MISMATCH,
    /** The strategy failed to run: the run fails. */
    ERROR
  }

  public boolean failedRun() {
    return status == Status.MISMATCH || status == Status.ERROR;
  }

  public boolean measured() {
    return status == Status.OK || status == Status.NOT_CHECKED || status == Status.MISMATCH;
  }

  /** Increments per write statement, or 0 when none were counted. */
  public double incrementsPerStatement() {
    return writeStatements == 0 ? 0 : (double) increments / writeStatements;
  }

  static StrategyResult notRun(String name, String title, boolean durable, Status status, String note) {
    return new StrategyResult(name, title, durable, status, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
      status == Status.SKIPPED ? "skipped" : "error", note);
  }

  public JsonObject toJson() {
    return new JsonObject()
      .put("name", name).put("title", title).put("durable", durable).put("status", status.name().toLowerCase())
      .put("writers", writers).put("seconds", seconds)
      .put("increments", increments).put("incrementsPerSecond", round(incrementsPerSecond))
      .put("latencyMs", new JsonObject().put("p50", p50Ms).put("p99", p99Ms).put("max", maxMs))
      .put("writeStatements", writeStatements).put("readStatements", readStatements)
      .put("incrementsPerStatement", round(incrementsPerStatement()))
      .put("acknowledged", acknowledged).put("failed", failed).put("unknown", unknown)
      .put("reads", reads).put("readsPerSecond", round(readsPerSecond)).put("readP99Ms", readP99Ms)
      .put("readErrors", readErrors).put("check", check).put("note", note);
  }

  private static double round(double value) {
    return Math.round(value * 10) / 10.0;
  }
}
