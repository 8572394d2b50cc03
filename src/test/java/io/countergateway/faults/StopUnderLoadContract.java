package io.countergateway.faults;

import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.Ledger;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import io.countergateway.faults.IncrementLoad.Outcome;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static io.countergateway.faults.Faults.await;
import static io.countergateway.faults.Faults.sleep;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * src/DESIGN.md §4 "Shutdown": the gateway is stopped (what SIGTERM does in {@code Main}) in the middle of a concurrent load
 * of ack=commit and ack=accepted increments. Requests after the stop get 503 {@code shutting_down} or no answer at all
 * (the server is gone), and count as not acknowledged; every 200 and every 202 must be in the table exactly once.
 */
abstract class StopUnderLoadContract extends FaultSuite {
  private static final String TABLE = "fault_stop";
  private static final int CLIENTS = 32;
  private static final int ACCEPTED_CLIENTS = 12;
  private static final long LATENCY_MS = 30;


  @Test
  @DisplayName("stopping the gateway under load flushes every 200 and 202 exactly once before it exits")
  void stopUnderLoad() {
    FaultDatabase db = database();
    JsonObject direct = db.config();
    // a database answering 30 ms late: while a flush is in flight the next batch builds up, so the stop finds
    // increments pending, in flight and waiting for their commit
    ChaosProxy slow = new ChaosProxy(tools, direct.getInteger("port"), db == FaultDatabase.POSTGRES);
    int proxyPort = await(slow.start(), 30);
    GatewayFixture fixture = GatewayFixture.start(GatewayFixture.baseConfig(direct.copy().put("port", proxyPort), TABLE));
    try {
      slow.latency(LATENCY_MS);
      String prefix = Faults.uniquePrefix("stop");
      IncrementLoad load = new IncrementLoad(tools, fixture.gateway.port(), "downloads", prefix, CLIENTS,
        ACCEPTED_CLIENTS, 5_000, 30_000);
      Future<Void> loadDone = load.start();
      load.awaitAnswered(ANSWERED, 2_000);
      double pendingAtStop = Faults.metric(load.probe(), "gateway_pending_counters");
      double waitingAtStop = Faults.metric(load.probe(), "gateway_waiting_requests");
      long stopAt = System.nanoTime();
      long[] stoppedAt = {0};
      Future<Void> stopped = fixture.stopGateway().onComplete(done -> stoppedAt[0] = System.nanoTime());
      sleep(1_500);
      load.finish();
      await(loadDone, 60);
      await(stopped, 60);

      Map<String, Long> sums = await(db.sums(tools, TABLE, "downloads", prefix), 60);
      List<Outcome> outcomes = load.outcomes();
      Ledger.Verdict ledger = IncrementLoad.verdict(db.label + " stop under load", outcomes, sums);
      Map<Integer, Integer> afterStop = new TreeMap<>();
      outcomes.stream().filter(o -> o.answeredAt - stopAt > 0).forEach(o -> afterStop.merge(o.status, 1, Integer::sum));
      System.out.println(ledger.summary() + " | just before the stop " + (long) pendingAtStop + " counters pending and "
        + (long) waitingAtStop + " requests waiting for a commit; the stop took "
        + TimeUnit.NANOSECONDS.toMillis(stoppedAt[0] - stopAt) + " ms; answers after the stop by status " + afterStop);

      ledger.assertHolds();
      assertThat(ledger.count("200")).as("200s").isPositive();
      assertThat(ledger.count("202")).as("202s").isPositive();
      assertThat(afterStop.getOrDefault(200, 0)).as("requests waiting for a commit at the stop, answered 200 by the drain")
        .isPositive();
      assertThat(ledger.count("503") + ledger.count("no answer")).as("requests after the stop, refused or unanswered").isPositive();
      assertThat(ledger.reasons(503)).as("why requests were refused").isSubsetOf("shutting_down");
    } finally {
      fixture.stopGateway().toCompletionStage().toCompletableFuture().exceptionally(e -> null);
      await(fixture.vertx.close(), 30);
      await(slow.close(), 30);
    }
  }
}
