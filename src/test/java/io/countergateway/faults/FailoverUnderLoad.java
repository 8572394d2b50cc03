package io.countergateway.faults;

import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.Ledger;
import io.vertx.core.Future;
import io.vertx.core.Vertx;

import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import static io.countergateway.faults.Faults.await;

/**
 * One failover of a replicated database under the load of {@link IncrementLoad} through both doors: the load runs
 * until {@link FaultSuite#ANSWERED} increments of each kind are answered, the failover runs, the load goes on until as
 * many more are answered, then the gateway is stopped (its journal drained) and the ledger is held against the SUMs of
 * the server that takes writes at the end. The gateway is stopped and its Vert.x closed whatever happens.
 *
 * @param ledger        every request's answer against the table
 * @param outcomes      every request sent, with what it got
 * @param answeredAfter requests sent after the failover and answered 200 or 202: the gateway found the new server
 */
record FailoverUnderLoad(Ledger.Verdict ledger, List<IncrementLoad.Outcome> outcomes, long answeredAfter) {
  static final int CLIENTS = 16;
  static final int ACCEPTED_CLIENTS = 4;

  /** What is done to the servers while the load runs; {@code load} paces it. Blocking. */
  interface Failover {
    void run(IncrementLoad load);
  }

  /**
   * Runs {@code failover} under load on {@code fixture}'s gateway, counters {@code type} with ids of {@code prefix};
   * {@code sums}: SUM(count) per id of those counters on the server that takes writes, read once the gateway stopped.
   */
  static FailoverUnderLoad run(Vertx tools, GatewayFixture fixture, String label, String type, String prefix,
                               Failover failover, Supplier<Map<String, Long>> sums) {
    boolean stopped = false;
    try {
      IncrementLoad load = new IncrementLoad(tools, fixture.gateway.port(), type, prefix, CLIENTS, ACCEPTED_CLIENTS,
        100_000, 45_000);
      Future<Void> loadDone = load.start();
      load.awaitAnswered(FaultSuite.ANSWERED, 5_000);
      failover.run(load);
      long resumedAt = System.nanoTime();
      load.awaitAnswered(FaultSuite.ANSWERED, 20_000);
      load.finish();
      await(loadDone, 60);
      List<IncrementLoad.Outcome> outcomes = load.outcomes();
      long answeredAfter = outcomes.stream().filter(o -> o.sentAt - resumedAt > 0 && o.status / 100 == 2).count();
      await(fixture.stopGateway(), 60);
      stopped = true;
      Ledger.Verdict ledger = IncrementLoad.verdict(label, outcomes, sums.get());
      System.out.println(ledger.summary() + " | " + answeredAfter + " answered 200/202 after the failover");
      return new FailoverUnderLoad(ledger, outcomes, answeredAfter);
    } finally {
      if (!stopped) {
        FaultSuite.stopQuietly(fixture);
      }
      await(fixture.vertx.close(), 30);
    }
  }
}
