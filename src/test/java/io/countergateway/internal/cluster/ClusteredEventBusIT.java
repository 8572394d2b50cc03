package io.countergateway.internal.cluster;

import com.hazelcast.multimap.MultiMap;
import io.countergateway.CounterClient;
import io.countergateway.CounterException;
import io.countergateway.internal.bus.Addresses;
import io.countergateway.config.ClusterOptions;
import io.countergateway.testing.ClusterCredentials;
import io.countergateway.testing.FreePorts;
import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.GatewayProcess;
import io.countergateway.testing.TestDatabases;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two gateways in their own JVMs and this test JVM as a third member of one Hazelcast cluster on loopback, each
 * holding the cluster's certificate and secret: the test sends through {@link CounterClient} exactly as an
 * application in another JVM would.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusteredEventBusIT {
  private static final String TABLE = "cluster_bus_counters";
  private static final long CLIENT_TIMEOUT_MS = 3_000;
  /** Vert.x's Hazelcast map of who consumes which address. */
  private static final String SUBSCRIPTIONS = "__vertx.subs";

  private final List<GatewayProcess> gateways = new ArrayList<>();
  private Vertx vertx;
  private CounterClient counters;
  private Pool sql;

  @BeforeAll
  void startCluster() {
    JsonObject database = TestDatabases.postgres();
    List<Integer> ports = List.of(FreePorts.take(), FreePorts.take(), FreePorts.take());
    List<String> members = ports.stream().map(port -> "127.0.0.1:" + port).toList();
    ClusterCredentials credentials = ClusterCredentials.create();
    for (int i = 0; i < 2; i++) {
      JsonObject config = GatewayFixture.baseConfig(database, TABLE)
        .put("cluster", credentials.member("gateway-" + i, clusterConfig(ports.get(i), members)));
      gateways.add(GatewayProcess.start("cluster-gateway-" + i, config));
    }
    ClusterOptions client = ClusterOptions.fromJson(credentials.member("client", clusterConfig(ports.get(2), members)));
    vertx = await(EventBusCluster.join(client));
    gateways.forEach(gateway -> gateway.awaitListening(Duration.ofSeconds(90)));
    counters = new CounterClient(vertx, CLIENT_TIMEOUT_MS);
    awaitBothGatewaysReached();
    sql = PgBuilder.pool().connectingTo(new PgConnectOptions().setHost(database.getString("host"))
      .setPort(database.getInteger("port")).setDatabase(database.getString("name")).setUser(database.getString("user"))
        .setPassword(database.getString("password")))
      .using(vertx).build();
  }

  /**
   * Until pings answered in a row cover both gateways: the first message to a member opens its TLS connection (the
   * handshake, and the TLS set-up of each JVM, take seconds on a loaded machine), and no test's first requests should
   * be the ones that wait for it.
   */
  private void awaitBothGatewaysReached() {
    long started = System.nanoTime();
    long deadline = started + Duration.ofSeconds(60).toNanos();
    int inRow = 0;
    while (inRow < 8) {
      assertThat(System.nanoTime()).as("8 pings in a row answered within 60 s").isLessThan(deadline);
      Future<Void> ping = counters.ping();
      ping.toCompletionStage().toCompletableFuture().handle((v, e) -> null).join();
      inRow = ping.succeeded() ? inRow + 1 : 0;
    }
    System.out.printf("both gateways reached over TLS after %d ms%n", (System.nanoTime() - started) / 1_000_000);
  }

  private static JsonObject clusterConfig(int port, List<String> members) {
    return new JsonObject().put("enabled", true).put("port", port).put("members", members).put("memberTimeout", "3s");
  }

  @AfterAll
  void stopCluster() throws Exception {
    try {
      if (vertx != null) {
        // closing Vert.x closes the pool too; waiting for the pool's own close first can hang after a member died
        vertx.close().toCompletionStage().toCompletableFuture().get(30, java.util.concurrent.TimeUnit.SECONDS);
      }
    } finally {
      gateways.forEach(GatewayProcess::close);
    }
  }

  @Test
  @Order(1)
  @DisplayName("2,000 increments requested from another JVM over 20 counters are each committed once and read back exactly")
  void requestedIncrementsCountExactly() {
    List<String> ids = IntStream.range(0, 20).mapToObj(i -> "request-" + i).toList();
    List<Future<Void>> acks = new ArrayList<>();
    for (int i = 0; i < 2_000; i++) {
      acks.add(counters.increment("downloads", ids.get(i % ids.size()), 1));
      if (acks.size() % 200 == 0) {
        await(Future.join(acks));
      }
    }
    await(Future.all(acks));

    assertThat(sumsInTable("request-")).hasSize(20).allSatisfy((id, sum) -> assertThat(sum).isEqualTo(100));
    assertThat(await(counters.get("downloads", ids))).hasSize(20).allSatisfy((id, value) -> assertThat(value).isEqualTo(100));
  }

  @Test
  @Order(2)
  @DisplayName("1,000 increments sent without waiting from another JVM are all written")
  void sentIncrementsAreWritten() {
    for (int i = 0; i < 1_000; i++) {
      counters.incrementAccepted("pageviews", "sent-" + (i % 4), 1);
    }
    awaitSums("sent-", Map.of("sent-0", 250L, "sent-1", 250L, "sent-2", 250L, "sent-3", 250L));
  }

  @Test
  @Order(3)
  @DisplayName("an increment published to every member is ignored, not counted once per gateway")
  void publishesAreIgnored() throws InterruptedException {
    vertx.eventBus().publish(Addresses.INCREMENT, new JsonObject().put("type", "likes").put("id", "published").put("delta", 5));
    await(counters.increment("likes", "published", 1));
    Thread.sleep(500);
    assertThat(sumsInTable("published")).containsExactly(Map.entry("published", 1L));
  }

  @Test
  @Order(4)
  @DisplayName("consumers that vanished from the cluster's routing (as after a split's merge) are routed to again within"
    + " a member timeout, without a restart")
  void lostRegistrationsComeBack() {
    MultiMap<Object, Object> subscriptions = ((HazelcastClusterManager) ((VertxInternal) vertx).clusterManager())
      .getHazelcastInstance().getMultiMap(SUBSCRIPTIONS);
    assertThat(subscriptions.get(Addresses.INCREMENT)).as("2 gateways x 2 ingest verticles").hasSize(4);

    subscriptions.remove(Addresses.INCREMENT);
    long removed = System.nanoTime();
    while (subscriptions.get(Addresses.INCREMENT).size() < 4) {
      assertThat(System.nanoTime() - removed).as("registrations back within a few member timeouts (3 s)")
        .isLessThan(Duration.ofSeconds(10).toNanos());
      GatewayProcess.sleep(100);
    }
    await(counters.increment("downloads", "after-republish", 1));
    assertThat(sumsInTable("after-republish")).containsExactly(Map.entry("after-republish", 1L));
  }

  @Test
  @Order(5)
  @DisplayName("a gateway killed under load loses no acknowledged increment, and every sender gets an answer within its timeout")
  void killedGatewayLosesNothingAcknowledged() throws InterruptedException {
    AtomicLong acknowledged = new AtomicLong();
    AtomicLong slowest = new AtomicLong();
    Map<String, AtomicLong> failures = new ConcurrentHashMap<>();
    List<Future<Void>> all = java.util.Collections.synchronizedList(new ArrayList<>());
    long loadEnds = System.nanoTime() + Duration.ofSeconds(7).toNanos();
    // 32 senders, each sending its next increment when the last one was answered
    for (int sender = 0; sender < 32; sender++) {
      String id = "kill-" + (sender % 8);
      vertx.runOnContext(v -> sendUntil(id, loadEnds, acknowledged, failures, slowest, all));
    }
    Thread.sleep(1_500);
    gateways.get(0).kill();
    long waitEnd = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (System.nanoTime() < loadEnds || pendingIn(all) > 0) {
      assertThat(System.nanoTime()).as("every request answered").isLessThan(waitEnd);
      Thread.sleep(100);
    }
    long failed = failures.values().stream().mapToLong(AtomicLong::get).sum();
    long sum = sumsInTable("kill-").values().stream().mapToLong(Long::longValue).sum();
    System.out.printf("killed gateway: %d acknowledged, %d failed %s, SUM %d, slowest answer %d ms%n",
      acknowledged.get(), failed, failures, sum, slowest.get());

    assertThat(sum).as("acknowledged increments are all in the table").isGreaterThanOrEqualTo(acknowledged.get());
    assertThat(sum).as("nothing beyond what was sent").isLessThanOrEqualTo(acknowledged.get() + failed);
    assertThat(failures.keySet()).as("failures are the bus's clear errors").isSubsetOf("timeout", "unavailable");
    assertThat(slowest.get()).as("no answer later than the client's timeout").isLessThan(CLIENT_TIMEOUT_MS + 1_000);
    assertThat(acknowledged.get()).isPositive();
    await(counters.increment("downloads", "after-kill", 1));
  }

  @Test
  @Order(6)
  @DisplayName("a clustered gateway stopped with SIGTERM drains, leaves the cluster and exits cleanly")
  void clusteredGatewayStopsOnSigterm() {
    GatewayProcess survivor = gateways.get(1);
    assertThat(survivor.stopGracefully(Duration.ofSeconds(30))).isZero();
    assertThat(survivor.logTail()).contains("stopped");
  }

  private void sendUntil(String id, long loadEnds, AtomicLong acknowledged, Map<String, AtomicLong> failures,
                         AtomicLong slowest, List<Future<Void>> all) {
    if (System.nanoTime() >= loadEnds) {
      return;
    }
    long started = System.nanoTime();
    Future<Void> ack = counters.increment("downloads", id, 1);
    all.add(ack);
    ack.onComplete(done -> {
      slowest.accumulateAndGet((System.nanoTime() - started) / 1_000_000, Math::max);
      if (done.succeeded()) {
        acknowledged.incrementAndGet();
      } else {
        String code = done.cause() instanceof CounterException error ? error.code() : done.cause().toString();
        failures.computeIfAbsent(code, c -> new AtomicLong()).incrementAndGet();
      }
      sendUntil(id, loadEnds, acknowledged, failures, slowest, all);
    });
  }

  private static long pendingIn(List<Future<Void>> futures) {
    synchronized (futures) {
      return futures.stream().filter(f -> !f.isComplete()).count();
    }
  }

  private void awaitSums(String prefix, Map<String, Long> expected) {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    Map<String, Long> sums = sumsInTable(prefix);
    while (!sums.equals(expected) && System.nanoTime() < deadline) {
      GatewayProcess.sleep(50);
      sums = sumsInTable(prefix);
    }
    assertThat(sums).isEqualTo(expected);
  }

  private Map<String, Long> sumsInTable(String prefix) {
    return await(sql.preparedQuery("SELECT record_id, SUM(count) FROM " + TABLE + " WHERE record_id LIKE $1 GROUP BY record_id")
      .execute(Tuple.of(prefix + "%"))
      .map(rows -> {
        Map<String, Long> sums = new java.util.HashMap<>();
        rows.forEach(row -> sums.put(row.getString(0), row.getNumeric(1).longValue()));
        return sums;
      }));
  }
}
