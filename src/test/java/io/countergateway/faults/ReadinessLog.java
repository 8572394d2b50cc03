package io.countergateway.faults;

import io.vertx.core.Vertx;
import io.vertx.ext.web.client.WebClient;

import java.util.Map;
import java.util.Queue;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;

/** Polls {@code /health/ready} every 100 ms and tallies what it saw per phase of a fault test ("outage:503" → n). */
final class ReadinessLog {
  private final Vertx vertx;
  private final Queue<String> seen = new ConcurrentLinkedQueue<>();
  private volatile String phase = "before";
  private final long poller;

  ReadinessLog(Vertx vertx, WebClient probe) {
    this.vertx = vertx;
    this.poller = vertx.setPeriodic(100, id -> {
      String now = phase;
      probe.get("/health/ready").timeout(3_000).send()
        .onComplete(r -> seen.add(now + ":" + (r.succeeded() ? r.result().statusCode() : 0)));
    });
  }

  void phase(String name) {
    phase = name;
  }

  /** Stops polling; answers the tally. */
  Map<String, Integer> stop() {
    vertx.cancelTimer(poller);
    Map<String, Integer> tally = new TreeMap<>();
    seen.forEach(status -> tally.merge(status, 1, Integer::sum));
    return tally;
  }
}
