package io.countergateway.faults;

import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.Ledger;
import io.countergateway.testing.StreamingPostgres;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.PgConnection;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static io.countergateway.faults.Faults.await;
import static io.countergateway.faults.Faults.millisSince;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * docs/guarantees.md "Replicated databases: what a failover keeps", on real servers: a PostgreSQL primary with a
 * synchronous streaming standby, the gateway given both in {@code database.hosts}, increments under load through both
 * doors (commit and accepted); the primary killed ({@code pg_ctl stop -m immediate}), the standby promoted, the load
 * going on. The primary's own {@code synchronous_commit} is {@code local}, under which its commits would not wait for
 * the standby: the gateway must raise its sessions to {@code on} for the promoted server to hold every 200.
 */
@DisplayName("A failover of a PostgreSQL primary to its synchronous standby under load")
class PostgresFailoverIT extends FailoverContract {
  private static final String DATABASE = "counters";
  private static final String TABLE = "fault_failover";
  private static final String TYPE = "downloads";

  @Test
  @DisplayName("the load reaches the promoted standby without a restart, and every 200 and 202 is counted there once")
  void synchronousFailoverLosesNothing() {
    try (StreamingPostgres servers = StreamingPostgres.start(DATABASE, true, List.of("synchronous_commit = local"))) {
      GatewayFixture fixture = GatewayFixture.start(config(servers));
      String prefix = Faults.uniquePrefix("failover");
      FailoverUnderLoad run = FailoverUnderLoad.run(tools, fixture, "PostgreSQL synchronous failover", TYPE, prefix,
        load -> {
          long killedAt = System.nanoTime();
          servers.crashPrimary();
          servers.promoteStandby();
          System.out.println("promoted " + millisSince(killedAt) + " ms after the kill");
        }, () -> await(sums(servers.standbyPort, prefix), 30));

      assertThat(loggedLines("replication:")).as("the start's replication line").singleElement().asString()
        .contains("1 synchronous standby(s)", "synchronous_commit on (the server's is local)", "loses none");
      run.ledger().assertHolds();
      assertThat(run.ledger().count("200")).as("200s").isPositive();
      assertThat(run.ledger().count("202")).as("202s").isPositive();
      assertThat(run.answeredAfter()).as("increments answered by the promoted standby, the gateway not restarted")
        .isGreaterThanOrEqualTo(2L * FaultSuite.ANSWERED);
      assertThat(servers.psql(servers.standbyPort, "SELECT pg_is_in_recovery()")).isEqualTo("f");
    }
  }

  @Test
  @DisplayName("a failover to an asynchronous standby whose link stalled loses increments answered in the stall, as the start said, and counts none twice")
  void asynchronousFailoverLosesTheStall() {
    FailoverUnderLoad run = asynchronousFailover(false);
    assertThat(loggedLines("replication:")).as("the start's replication line").singleElement().asString()
      .contains("1 asynchronous standby(s)", "can lose", "database.keepUntilReplicated");
    assertThat(run.ledger().overCounted).as("%s: counted twice", run.ledger().summary()).isZero();
    assertThat(run.ledger().lost).as("increments answered while the link stalled, missing on the promoted standby")
      .isPositive();
  }

  @Test
  @DisplayName("with database.keepUntilReplicated the same failover counts every 202 and 200 once on the promoted standby: what it lacked is written again under the same flush ids")
  void asynchronousFailoverKeptUntilReplicated() {
    FailoverUnderLoad run = asynchronousFailover(true);
    assertThat(loggedLines("replication:")).as("the start's replication line").singleElement().asString()
      .contains("1 asynchronous standby(s)", "database.keepUntilReplicated holds each flush", "loses no 202");
    run.ledger().assertHolds();
    assertThat(run.ledger().count("202")).as("202s").isPositive();
    assertThat(run.ledger().count("200")).as("200s").isPositive();
  }

  @Test
  @DisplayName("with database.keepUntilReplicated, a gateway stopped while the primary is down and started again against the promoted standby writes what it lacks from the journal under the same flush ids: every 202 counted once, nothing twice")
  void asynchronousFailoverReplayedAfterARestart() {
    try (StreamingPostgres servers = StreamingPostgres.start(DATABASE, false, List.of())) {
      JsonObject config = GatewayFixture.baseConfig(servers.config(DATABASE).put("keepUntilReplicated", true), TABLE);
      config.put("batching", new JsonObject().put("retryBackoff", "50ms").put("retryBackoffMax", "300ms"));
      String prefix = Faults.uniquePrefix("async-restart");
      List<IncrementLoad.Outcome> outcomes;
      GatewayFixture first = GatewayFixture.start(config);
      try {
        IncrementLoad load = new IncrementLoad(tools, first.gateway.port(), "downloads", prefix, FailoverUnderLoad.CLIENTS,
          FailoverUnderLoad.ACCEPTED_CLIENTS, 100_000, 45_000);
        Future<Void> loadDone = load.start();
        load.awaitAnswered(FaultSuite.ANSWERED, 5_000);
        servers.stallStandby();
        load.awaitAnswered(FaultSuite.ANSWERED, 5_000);
        load.finish();
        await(loadDone, 60);
        outcomes = load.outcomes();
        servers.crashPrimary();
        // the drain finds no primary to confirm what the standby has: what it holds stays in the journal
        FaultSuite.stopQuietly(first);
      } finally {
        await(first.vertx.close(), 30);
      }
      servers.cutStalledLink();
      servers.promoteStandby();
      GatewayFixture second = GatewayFixture.start(config);
      try {
        await(second.stopGateway(), 60);
      } finally {
        await(second.vertx.close(), 30);
      }

      Map<String, Long> sums = await(sums(servers.standbyPort, prefix), 30);
      Ledger.Verdict accepted = doorVerdict("PostgreSQL asynchronous failover, restarted against the promoted "
        + "standby: 202s", outcomes, sums, true);
      Ledger.Verdict committed = doorVerdict("the same: 200s", outcomes, sums, false);
      System.out.println(accepted.summary() + " | " + committed.summary());
      accepted.assertHolds();
      assertThat(accepted.count("202")).as("202s").isPositive();
      assertThat(committed.overCounted).as("%s: counted twice", committed.summary()).isZero();
    }
  }

  /** The ledger of one door's requests ({@code accepted}: 202s, else 200s) against their ids' sums. */
  private static Ledger.Verdict doorVerdict(String label, List<IncrementLoad.Outcome> outcomes, Map<String, Long> sums,
                                            boolean accepted) {
    List<IncrementLoad.Outcome> door = outcomes.stream().filter(o -> o.accepted == accepted).toList();
    Map<String, Long> doorSums = new HashMap<>();
    door.forEach(o -> doorSums.put(o.id, sums.getOrDefault(o.id, 0L)));
    doorSums.values().removeIf(sum -> sum == 0);
    return IncrementLoad.verdict(label, door, doorSums);
  }

  @Test
  @DisplayName("a standby listed first is passed over for the primary, the start says an asynchronous standby can lose the last increments, and a list of standbys only is refused naming database.hosts")
  void neverWritesToAStandby() {
    try (StreamingPostgres servers = StreamingPostgres.start(DATABASE, false, List.of())) {
      JsonObject standbyFirst = servers.config(DATABASE).put("hosts", new JsonArray()
        .add("127.0.0.1:" + servers.standbyPort).add("127.0.0.1:" + servers.primaryPort));
      GatewayFixture fixture = GatewayFixture.start(GatewayFixture.baseConfig(standbyFirst, TABLE));
      try {
        assertThat(loggedLines("replication:")).as("the start's replication line").singleElement().asString()
          .contains("1 asynchronous standby(s)", "last moments");
        String prefix = Faults.uniquePrefix("standby-first");
        IncrementLoad load = new IncrementLoad(tools, fixture.gateway.port(), TYPE, prefix, 4, 0, 25, 20_000);
        await(load.start(), 60);
        await(fixture.stopGateway(), 60);
        Map<String, Long> sums = await(sums(servers.primaryPort, prefix), 30);
        IncrementLoad.verdict("PostgreSQL standby listed first", load.outcomes(), sums).assertHoldsAllAnswered();
        assertThat(sums.values().stream().mapToLong(Long::longValue).sum()).as("counted on the primary").isEqualTo(100);
      } finally {
        FaultSuite.stopQuietly(fixture);
        await(fixture.vertx.close(), 30);
      }

      JsonObject standbyOnly = servers.config(DATABASE).put("hosts", new JsonArray()
        .add("127.0.0.1:" + servers.standbyPort));
      assertThatThrownBy(() -> GatewayFixture.start(GatewayFixture.baseConfig(standbyOnly, TABLE + "_standby")))
        .hasMessageContaining("no host of database.hosts takes writes: 127.0.0.1:" + servers.standbyPort
          + " is read-only (a standby)");
    }
  }

  /**
   * Load through both doors; the standby's WAL receiver stopped, so the primary commits on without it; the primary
   * killed, the stalled link cut, the standby promoted, the load going on; the ledger read on the promoted standby.
   */
  private FailoverUnderLoad asynchronousFailover(boolean keepUntilReplicated) {
    try (StreamingPostgres servers = StreamingPostgres.start(DATABASE, false, List.of())) {
      JsonObject config = config(servers);
      config.getJsonObject("database").put("keepUntilReplicated", keepUntilReplicated);
      GatewayFixture fixture = GatewayFixture.start(config);
      String prefix = Faults.uniquePrefix("async-failover");
      FailoverUnderLoad run = FailoverUnderLoad.run(tools, fixture, "PostgreSQL asynchronous failover, link stalled, "
        + "keepUntilReplicated " + keepUntilReplicated, TYPE, prefix, load -> {
          servers.stallStandby();
          long stalledAt = System.nanoTime();
          load.awaitAnswered(FaultSuite.ANSWERED, 5_000);
          System.out.println("link stalled " + millisSince(stalledAt) + " ms before the kill");
          servers.crashPrimary();
          servers.cutStalledLink();
          servers.promoteStandby();
        }, () -> await(sums(servers.standbyPort, prefix), 30));
      assertThat(run.answeredAfter()).as("increments answered by the promoted standby, the gateway not restarted")
        .isGreaterThanOrEqualTo(2L * FaultSuite.ANSWERED);
      return run;
    }
  }

  private static JsonObject config(StreamingPostgres servers) {
    JsonObject config = GatewayFixture.baseConfig(servers.config(DATABASE), TABLE);
    config.put("batching", new JsonObject().put("retryBackoff", "50ms").put("retryBackoffMax", "300ms"));
    return config;
  }

  /** SUM(count) per record_id of the load's counters, on the server at {@code port}. */
  private Future<Map<String, Long>> sums(int port, String prefix) {
    return PgConnection.connect(tools, new PgConnectOptions().setHost("127.0.0.1").setPort(port)
        .setDatabase(DATABASE).setUser("postgres"))
      .compose(conn -> conn.preparedQuery("SELECT record_id, SUM(count) FROM " + TABLE
          + " WHERE record_type = $1 AND record_id LIKE $2 GROUP BY record_id")
        .execute(Tuple.of(TYPE, prefix + "%"))
        .map(rows -> {
          Map<String, Long> sums = new HashMap<>();
          for (Row row : rows) {
            sums.put(row.getString(0), row.getNumeric(1).longValue());
          }
          return sums;
        })
        .eventually(conn::close));
  }
}
