package io.countergateway.faults;

import io.countergateway.testing.Eventually;
import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.ReplicatedMariaDb;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.WebClient;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static io.countergateway.faults.Faults.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * docs/guarantees.md "Replicated databases: what a failover keeps" and docs/databases.md "Failover: following the
 * primary" on MariaDB: a primary and a replica following it by GTID binlog replication ({@link ReplicatedMariaDb}), the
 * gateway given both in {@code database.hosts} as a user that {@code read_only} binds, increments under load through
 * both doors (commit and accepted). The link to the replica is cut and the primary killed, the replica promoted:
 * semi-synchronous, no increment answered is lost; asynchronous, those answered in the cut are, as the start says. Or
 * the primary is demoted in place ({@code read_only}) for a switchover to the caught-up replica. Each time the gateway
 * follows the server that takes writes without a restart, and counts nothing twice.
 */
@DisplayName("A failover of a MariaDB primary to its replica under load")
class MariaDbFailoverIT extends FailoverContract {
  private static final String DATABASE = "counters";
  private static final String TABLE = "fault_failover";
  private static final String TYPE = "downloads";

  @Test
  @DisplayName("a semi-synchronous primary cut from its replica, then killed, the replica promoted: no commit is answered while the replica receives nothing, the load reaches the promoted replica without a restart, and every 200 and 202 is counted there once")
  void semiSynchronousFailoverLosesNothing() {
    try (ReplicatedMariaDb servers = ReplicatedMariaDb.start(DATABASE, true)) {
      GatewayFixture fixture = GatewayFixture.start(config(servers));
      long[] cut = new long[2];
      String prefix = Faults.uniquePrefix("maria-failover");
      FailoverUnderLoad run = FailoverUnderLoad.run(tools, fixture, "MariaDB semi-synchronous failover, link cut",
        TYPE, prefix, load -> {
          servers.cutLink();
          cut[0] = System.nanoTime();
          // the 202s go on (journaled); no 200 can come, so this waits out its bound: the cut's length
          load.awaitAnswered(FaultSuite.ANSWERED, 1_500);
          cut[1] = System.nanoTime();
          servers.crashPrimary();
          servers.promoteReplica();
        }, () -> servers.sums(servers.replicaPort(), DATABASE, TABLE, TYPE, prefix));

      assertThat(loggedLines("replication:")).as("the start's replication line").singleElement().asString()
        .contains("1 semi-synchronous replica(s)", "loses none");
      assertThat(loggedLines("database.user")).as("a warning of a user that writes through read_only").isEmpty();
      run.ledger().assertHolds();
      assertThat(run.ledger().count("200")).as("200s").isPositive();
      assertThat(run.ledger().count("202")).as("202s").isPositive();
      assertThat(run.outcomes().stream().filter(o -> o.status == 200 && o.sentAt - cut[0] > 0
        && cut[1] - o.answeredAt > 0)).as("200s sent and answered while the replica received nothing").isEmpty();
      assertThat(run.answeredAfter()).as("increments answered by the promoted replica, the gateway not restarted")
        .isGreaterThanOrEqualTo(2L * FaultSuite.ANSWERED);
    }
  }

  @Test
  @DisplayName("an asynchronous primary cut from its replica, then killed, the replica promoted: the increments answered in the cut are lost, as the start said, and none is counted twice")
  void asynchronousFailoverLosesTheCut() {
    try (ReplicatedMariaDb servers = ReplicatedMariaDb.start(DATABASE, false)) {
      GatewayFixture fixture = GatewayFixture.start(config(servers));
      String prefix = Faults.uniquePrefix("maria-async-failover");
      FailoverUnderLoad run = FailoverUnderLoad.run(tools, fixture, "MariaDB asynchronous failover, link cut", TYPE,
        prefix, load -> {
          servers.cutLink();
          load.awaitAnswered(FaultSuite.ANSWERED, 5_000);
          servers.crashPrimary();
          servers.promoteReplica();
        }, () -> servers.sums(servers.replicaPort(), DATABASE, TABLE, TYPE, prefix));

      assertThat(loggedLines("replication:")).as("the start's replication line").singleElement().asString()
        .contains("1 asynchronous replica(s)", "last moments");
      assertThat(run.ledger().overCounted).as("%s: counted twice", run.ledger().summary()).isZero();
      assertThat(run.ledger().lost).as("increments answered while the link was cut, missing on the promoted replica")
        .isPositive();
      assertThat(run.answeredAfter()).as("increments answered by the promoted replica, the gateway not restarted")
        .isGreaterThanOrEqualTo(2L * FaultSuite.ANSWERED);
    }
  }

  @Test
  @DisplayName("a switchover that sets the old primary read_only: the gateway writes nothing more there, moves to the replica made writable without a restart, and every 200 and 202 is counted there once")
  void switchoverByReadOnly() {
    try (ReplicatedMariaDb servers = ReplicatedMariaDb.start(DATABASE, false)) {
      GatewayFixture fixture = GatewayFixture.start(config(servers));
      String prefix = Faults.uniquePrefix("maria-switch");
      List<Map<String, Long>> demoted = new ArrayList<>();
      List<Long> readBack = new ArrayList<>();
      FailoverUnderLoad run = FailoverUnderLoad.run(tools, fixture, "MariaDB switchover by read_only", TYPE, prefix,
        load -> {
          // reads all along, so that the read pool's connections stay busy on the old primary
          long reading = tools.setPeriodic(10, id -> load.probe().get(counter(prefix + "1")).send());
          try {
            servers.demotePrimary();
            demoted.add(servers.sums(servers.primaryPort(), DATABASE, TABLE, TYPE, prefix));
            // a switch as slow as a failover manager's: for a while no server takes writes, accepted ones are journaled
            Faults.sleep(500);
            servers.promoteReplica();
            readBack.add(readAfterWrite(load.probe(), "read-" + prefix));
          } finally {
            tools.cancelTimer(reading);
          }
        }, () -> servers.sums(servers.replicaPort(), DATABASE, TABLE, TYPE, prefix));

      run.ledger().assertHolds();
      assertThat(run.answeredAfter()).as("increments answered by the promoted replica, the gateway not restarted")
        .isGreaterThanOrEqualTo(2L * FaultSuite.ANSWERED);
      assertThat(servers.sums(servers.primaryPort(), DATABASE, TABLE, TYPE, prefix))
        .as("the old primary's counts, unchanged since it was set read_only").isEqualTo(demoted.get(0));
      assertThat(readBack).as("an increment answered 200 after the switch, read back through the gateway, whose read "
        + "connections were busy on the old primary").containsExactly(1L);
    }
  }

  @Test
  @DisplayName("a read_only replica listed first is passed over for the primary, a user that writes through read_only is warned of at start, and a list without a writable server is refused naming database.hosts and why each was passed, innodb_read_only too")
  void neverWritesToAReadOnlyServer() {
    try (ReplicatedMariaDb servers = ReplicatedMariaDb.start(DATABASE, false)) {
      JsonObject replicaFirst = config(servers);
      replicaFirst.getJsonObject("database").put("hosts", new JsonArray()
        .add("127.0.0.1:" + servers.replicaPort()).add("127.0.0.1:" + servers.primaryPort()));
      GatewayFixture fixture = GatewayFixture.start(replicaFirst);
      String prefix = Faults.uniquePrefix("maria-replica-first");
      try {
        IncrementLoad load = new IncrementLoad(tools, fixture.gateway.port(), TYPE, prefix, 4, 0, 25, 20_000);
        await(load.start(), 60);
        await(fixture.stopGateway(), 60);
        Map<String, Long> sums = servers.sums(servers.primaryPort(), DATABASE, TABLE, TYPE, prefix);
        IncrementLoad.verdict("MariaDB replica listed first", load.outcomes(), sums).assertHoldsAllAnswered();
        assertThat(sums.values().stream().mapToLong(Long::longValue).sum()).as("counted on the primary").isEqualTo(100);
      } finally {
        FaultSuite.stopQuietly(fixture);
        await(fixture.vertx.close(), 30);
      }

      JsonObject asRoot = config(servers);
      asRoot.getJsonObject("database").put("user", "root").put("password", "");
      GatewayFixture rootFixture = GatewayFixture.start(asRoot);
      try {
        assertThat(loggedLines("database.user root holds")).as("the start's warning of a user that writes through "
          + "read_only").singleElement().asString().contains("READ_ONLY ADMIN", "read_only");
      } finally {
        FaultSuite.stopQuietly(rootFixture);
        await(rootFixture.vertx.close(), 30);
      }

      servers.restartPrimaryInnoDbReadOnly();
      JsonObject noneWritable = config(servers);
      assertThatThrownBy(() -> GatewayFixture.start(noneWritable))
        .hasMessageContaining("no host of database.hosts takes writes: 127.0.0.1:" + servers.primaryPort()
          + " is read-only (innodb_read_only ON), 127.0.0.1:" + servers.replicaPort() + " is read-only (read_only ON)");
    }
  }

  private static JsonObject config(ReplicatedMariaDb servers) {
    JsonObject config = GatewayFixture.baseConfig(servers.config(DATABASE), TABLE);
    config.put("batching", new JsonObject().put("retryBackoff", "50ms").put("retryBackoffMax", "300ms"));
    return config;
  }

  private static String counter(String id) {
    return "/v1/counters/" + TYPE + "/" + id;
  }

  /**
   * One increment of {@code id} answered 200, then its value read until it is 1: within the 5 s a pooled connection
   * of {@code database.hosts} lives at most, and a read's own time; well before the read pool's idle timeout (15 s),
   * which busy connections never reach.
   */
  private static long readAfterWrite(WebClient client, String id) {
    assertThat(await(client.post(counter(id) + "/increments").putHeader("Content-Type", "application/json")
      .sendBuffer(Buffer.buffer("{\"delta\":1}")), 30).statusCode()).as("the increment after the switch")
      .isEqualTo(200);
    return Eventually.value(() -> await(client.get(counter(id)).send(), 30).bodyAsJsonObject().getLong("value"), 1L,
      Duration.ofSeconds(12));
  }
}
