package io.countergateway.bench;

import io.countergateway.Main;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

@DisplayName("the bench command line")
class BenchCommandTest {
  private final StringWriter out = new StringWriter();
  private final StringWriter err = new StringWriter();

  private int execute(String... args) {
    CommandLine cli = new CommandLine(new BenchCommand());
    cli.setOut(new PrintWriter(out));
    cli.setErr(new PrintWriter(err));
    return cli.execute(args);
  }

  @Test
  @DisplayName("is a command of its own and explains its options")
  void helpListsTheOptions() {
    assertThat(execute("--help")).isZero();
    assertThat(out.toString()).contains("counter-gateway-bench", "--db", "--concurrency", "--duration", "--counters",
      "--read-mix", "--strategies", "--json", "--chart", "plain-server", "latency-proxy");
  }

  @Test
  @DisplayName("is not part of the gateway's command line")
  void notInTheGateway() {
    assertThat(new CommandLine(new Main()).getSubcommands()).isEmpty();
  }

  @Test
  @DisplayName("refuses an unknown strategy with exit code 2 before connecting anywhere")
  void unknownStrategy() {
    assertThat(execute("--strategies", "single-row,teleport")).isEqualTo(2);
    assertThat(err.toString()).contains("unknown strategy 'teleport'");
  }

  @Test
  @DisplayName("refuses an unknown database kind with exit code 2")
  void unknownDatabase() {
    assertThat(execute("--db", "oracle")).isEqualTo(2);
    assertThat(err.toString()).contains("--db must be postgres or mysql");
  }

  @Test
  @DisplayName("reads durations as 20s, 1500ms, 1m or plain seconds")
  void durations() {
    BenchCommand.DurationConverter converter = new BenchCommand.DurationConverter();
    assertThat(converter.convert("20s")).isEqualTo(Duration.ofSeconds(20));
    assertThat(converter.convert("1500ms")).isEqualTo(Duration.ofMillis(1500));
    assertThat(converter.convert("1m")).isEqualTo(Duration.ofMinutes(1));
    assertThat(converter.convert("2.5")).isEqualTo(Duration.ofMillis(2500));
    assertThat(execute("--duration", "soon")).isEqualTo(2);
  }

  @Test
  @DisplayName("reads the latency proxy's one-way delay as 250us, 0.25ms, 1ms, 0.002s or plain milliseconds")
  void delays() {
    LatencyProxyCommand.DelayConverter converter = new LatencyProxyCommand.DelayConverter();
    assertThat(converter.convert("250us")).isEqualTo(250_000L);
    assertThat(converter.convert("0.25ms")).isEqualTo(250_000L);
    assertThat(converter.convert("1ms")).isEqualTo(1_000_000L);
    assertThat(converter.convert("0.002s")).isEqualTo(2_000_000L);
    assertThat(converter.convert("0")).isZero();
    assertThat(converter.convert("1.5")).isEqualTo(1_500_000L);
    assertThat(execute("latency-proxy", "--target", "127.0.0.1:5432", "--delay", "-1ms")).isEqualTo(2);
    assertThat(err.toString()).contains("the delay must be between 0 and 60 s");
    assertThat(execute("latency-proxy", "--target", "nowhere", "--port", "0")).isEqualTo(2);
    assertThat(err.toString()).contains("--target must be HOST:PORT, got 'nowhere'");
  }

  @Test
  @DisplayName("knows MariaDB as the mysql dialect, with its default port and user")
  void dialects() {
    BenchOptions options = new BenchOptions().dialect(Dialect.parse("mariadb"));
    assertThat(options.dialect()).isEqualTo(Dialect.MYSQL);
    assertThat(options.port()).isEqualTo(3306);
    assertThat(options.user()).isEqualTo("root");
    assertThat(new BenchOptions().port()).isEqualTo(5432);
  }

  @Test
  @DisplayName("lays --gateway KEY=VALUE overrides over the gateway's config, typed")
  void gatewayOverrides() {
    BenchContext ctx = new BenchContext(null, new BenchOptions().gatewaySettings(java.util.Map.of(
      "batching.maxInFlight", "2", "http.instances", "2", "batching.maxDelay", "5ms", "database.readPoolSize", "8")), "r");
    io.vertx.core.json.JsonObject config = new GatewayBus(ctx, 1).config();

    assertThat(config.getJsonObject("batching").getLong("maxInFlight")).isEqualTo(2L);
    assertThat(config.getJsonObject("batching").getString("maxDelay")).isEqualTo("5ms");
    assertThat(config.getJsonObject("http").getLong("instances")).isEqualTo(2L);
    assertThat(config.getJsonObject("http").getInteger("port")).isZero();
    assertThat(config.getJsonObject("database").getLong("readPoolSize")).isEqualTo(8L);
    assertThat(config.getJsonObject("database").getString("table")).isEqualTo("bench_gw_bus");
    assertThat(io.countergateway.config.GatewayConfig.fromJson(config).getBatching().getMaxInFlight()).isEqualTo(2);
  }

  @Test
  @DisplayName("counts SELECTs and GETs as reads, everything else (SELECT … FOR UPDATE too) as writes")
  void statementKinds() {
    assertThat(StatementCounter.isRead("SELECT SUM(count) FROM t")).isTrue();
    assertThat(StatementCounter.isRead("  select 1")).isTrue();
    assertThat(StatementCounter.isRead("SELECT slot FROM t LIMIT 1 FOR UPDATE SKIP LOCKED")).isFalse();
    assertThat(StatementCounter.isRead("INSERT INTO t VALUES (1)")).isFalse();
    assertThat(StatementCounter.isRead("WITH f AS (INSERT …) INSERT …")).isFalse();
    assertThat(StatementCounter.isRead("get")).isTrue();
    assertThat(StatementCounter.isRead("mget")).isTrue();
    assertThat(StatementCounter.isRead("getset")).isFalse();
    assertThat(StatementCounter.isRead("incrby")).isFalse();
    assertThat(StatementCounter.isRead(null)).isFalse();
  }
}
