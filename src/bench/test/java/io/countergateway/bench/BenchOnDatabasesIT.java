package io.countergateway.bench;

import io.countergateway.testing.TestDatabases;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every strategy, for about a second each with a few writers, against the embedded PostgreSQL and MariaDB: each
 * must count correctly. No timing is asserted; the machine's own servers are never used here (Redis neither).
 */
@DisplayName("bench on the embedded databases")
class BenchOnDatabasesIT {
  private static final List<String> ALL_BUT_REDIS = Strategies.DEFAULT.stream().filter(s -> !s.equals("redis")).toList();

  static BenchOptions options(JsonObject database) {
    return new BenchOptions()
      .dialect(Dialect.parse(database.getString("kind")))
      .host(database.getString("host")).port(database.getInteger("port"))
      .user(database.getString("user")).password(database.getString("password"))
      .database(database.getString("name"))
      .concurrency(4).readers(2).duration(Duration.ofMillis(1000)).warmup(Duration.ZERO)
      .foldInterval(Duration.ofMillis(200)).batchSize(10).strategies(ALL_BUT_REDIS);
  }

  @Test
  @DisplayName("on PostgreSQL every strategy counts one hot counter correctly, and the read mix reads it")
  void postgresHotCounterWithReads() {
    RunReport report = run(options(TestDatabases.postgres()).counters(1).readMix(true));

    assertEveryStrategyCounted(report);
    assertThat(report.results()).filteredOn(StrategyResult::durable)
      .allSatisfy(r -> assertThat(r.reads()).as(r.name() + " reads").isPositive());
  }

  @Test
  @DisplayName("on MariaDB every strategy counts 50 counters correctly")
  void mariaDbManyCounters() {
    RunReport report = run(options(TestDatabases.mariadb()).counters(50));

    assertEveryStrategyCounted(report);
    assertThat(report.results()).allSatisfy(r -> assertThat(r.reads()).isZero());
  }

  @Test
  @DisplayName("the multi-row strategy creates fewer rows per counter when counters x slots would be too many")
  void multiRowCapsItsRows() {
    RunReport report = run(options(TestDatabases.postgres()).counters(2_000).maxPreCreatedRows(10_000)
      .duration(Duration.ofMillis(500)).strategies(List.of("multi-row")));

    assertEveryStrategyCounted(report);
    assertThat(report.results().get(0).title()).contains("5 rows");
  }

  private static RunReport run(BenchOptions options) {
    try (BenchRunner runner = new BenchRunner(options)) {
      return runner.run("test");
    }
  }

  private static void assertEveryStrategyCounted(RunReport report) {
    assertThat(report.results()).extracting(StrategyResult::name).containsExactlyElementsOf(report.options().strategies());
    assertThat(report.results()).allSatisfy(r -> {
      assertThat(r.status()).as(r.name() + ": " + r.check() + " " + r.note())
        .isIn(StrategyResult.Status.OK, StrategyResult.Status.NOT_CHECKED);
      assertThat(r.increments()).as(r.name() + " increments in the window").isPositive();
      assertThat(r.failed()).as(r.name() + " failed increments: " + r.note()).isZero();
      if (r.status() == StrategyResult.Status.OK) {
        assertThat(r.check()).startsWith("ok");
        assertThat(r.writeStatements()).as(r.name() + " statements").isPositive();
      }
    });
    assertThat(report.passed()).isTrue();
  }
}
