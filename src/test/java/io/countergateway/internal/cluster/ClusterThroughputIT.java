package io.countergateway.internal.cluster;

import io.countergateway.CounterClient;
import io.countergateway.Gateway;
import io.countergateway.config.ClusterOptions;
import io.countergateway.config.GatewayConfig;
import io.countergateway.testing.ClusterCredentials;
import io.countergateway.testing.FreePorts;
import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.GatewayProcess;
import io.countergateway.testing.TestDatabases;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Event-bus increments/s through {@link CounterClient}, from the gateway's own JVM and from a second JVM over the
 * clustered bus, in one run. A measurement, not a check of speed, so opt-in:
 * {@code mvn verify -Dit.test=ClusterThroughputIT -Dthroughput=true}; the figures go to the test's output.
 */
@EnabledIfSystemProperty(named = "throughput", matches = "true")
class ClusterThroughputIT {
  private static final Duration WARM_UP = Duration.ofSeconds(5);
  private static final Duration MEASURED = Duration.ofSeconds(8);
  private static final int SENDERS = 64;
  private static final int BATCH_SENDERS = 4;
  private static final int BATCH = 1_000;

  @Test
  @DisplayName("increments over the event bus from a second JVM are counted exactly, at a rate measured beside in-process senders")
  void inProcessAndSecondJvm() throws Exception {
    JsonObject database = TestDatabases.postgres();
    List<String> table = new ArrayList<>();

    Vertx local = Vertx.vertx();
    Gateway gateway = await(Gateway.start(local, GatewayConfig.fromJson(GatewayFixture.baseConfig(database, "bus_local")),
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT)));
    table.add(measure("in-process", new CounterClient(local), local, database, "bus_local"));
    await(gateway.stop());
    await(local.close());

    int gatewayPort = FreePorts.take();
    int clientPort = FreePorts.take();
    List<String> members = List.of("127.0.0.1:" + gatewayPort, "127.0.0.1:" + clientPort);
    // as a deployment runs it: TLS with client certificates, membership by the secret
    ClusterCredentials credentials = ClusterCredentials.create();
    try (GatewayProcess remote = GatewayProcess.start("throughput-gateway", GatewayFixture.baseConfig(database, "bus_remote")
      .put("cluster", credentials.member("gateway", new JsonObject().put("enabled", true).put("port", gatewayPort)
        .put("members", members))))) {
      Vertx client = await(EventBusCluster.join(ClusterOptions.fromJson(credentials.member("client", new JsonObject()
        .put("enabled", true).put("port", clientPort).put("members", new JsonArray(members))))));
      remote.awaitListening(Duration.ofSeconds(90));
      table.add(measure("second JVM, clustered bus", new CounterClient(client), client, database, "bus_remote"));
      client.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
    System.out.printf("| senders | request, 1 increment (%d in flight) | batches of %,d over %,d counters (%d in flight) |%n"
      + "|---|---:|---:|%n%s%n", SENDERS, BATCH, BATCH, BATCH_SENDERS, String.join("\n", table));
  }

  private static String measure(String label, CounterClient counters, Vertx vertx, JsonObject database, String table) {
    long single = run(vertx, SENDERS, () -> counters.increment("downloads", "hot", 1).map(1L));
    JsonArray batch = new JsonArray();
    for (int i = 0; i < BATCH; i++) {
      batch.add(new JsonObject().put("type", "likes").put("id", "c" + i).put("delta", 1));
    }
    long batched = run(vertx, BATCH_SENDERS, () -> counters.incrementAll(batch).map((long) BATCH));
    Pool sql = PgBuilder.pool().connectingTo(new PgConnectOptions().setHost(database.getString("host"))
      .setPort(database.getInteger("port")).setDatabase(database.getString("name")).setUser(database.getString("user"))
        .setPassword(database.getString("password")))
      .using(vertx).build();
    long sum = await(sql.query("SELECT COALESCE(SUM(count), 0) FROM " + table).execute()
      .map(rows -> rows.iterator().next().getNumeric(0).longValue()));
    await(sql.close());
    assertThat(sum).as(label + ": the table holds every acknowledged increment").isEqualTo(ACKED.getAndSet(0));
    return String.format("| %s | %,d/s | %,d/s |", label, single, batched);
  }

  /** Every increment acknowledged in a run, warm-up included, to compare with the table. */
  private static final AtomicLong ACKED = new AtomicLong();

  /** {@code senders} loops, each sending when its last request was answered; returns increments/s after warm-up. */
  private static long run(Vertx vertx, int senders, java.util.function.Supplier<Future<Long>> send) {
    long start = System.nanoTime();
    long measureFrom = start + WARM_UP.toNanos();
    long end = measureFrom + MEASURED.toNanos();
    AtomicLong measured = new AtomicLong();
    List<Future<Void>> loops = new ArrayList<>();
    for (int i = 0; i < senders; i++) {
      Promise<Void> done = Promise.promise();
      loops.add(done.future());
      vertx.runOnContext(v -> loop(send, measureFrom, end, measured, done));
    }
    await(Future.all(loops));
    return measured.get() * 1_000_000_000L / MEASURED.toNanos();
  }

  private static void loop(java.util.function.Supplier<Future<Long>> send, long measureFrom, long end, AtomicLong measured,
                           Promise<Void> done) {
    send.get().onComplete(result -> {
      if (result.failed()) {
        done.fail(result.cause());
        return;
      }
      ACKED.addAndGet(result.result());
      long now = System.nanoTime();
      if (now >= measureFrom && now < end) {
        measured.addAndGet(result.result());
      }
      if (now < end) {
        loop(send, measureFrom, end, measured, done);
      } else {
        done.complete();
      }
    });
  }
}
