package io.countergateway.internal.cluster;

import io.countergateway.CounterClient;
import io.countergateway.Gateway;
import io.countergateway.internal.bus.Addresses;
import io.countergateway.config.ClusterOptions;
import io.countergateway.config.GatewayConfig;
import io.countergateway.testing.ClusterCredentials;
import io.countergateway.testing.DirectSql;
import io.countergateway.testing.FreePorts;
import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.GatewayProcess;
import io.countergateway.testing.TestCertificates;
import io.countergateway.testing.TestDatabases;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A gateway whose clustered event bus runs TLS with certificates both ways ({@code cluster.tls.*}), a member holding
 * a certificate of the cluster's CA, and two intruders that know the cluster's secret, so are members of the same
 * Hazelcast cluster: one without any certificate, one with a certificate of its own CA. All in this JVM, on loopback, as separate Vert.x instances and Hazelcast members.
 */
@DisplayName("The clustered event bus with TLS and client certificates (cluster.tls.*)")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class EventBusTlsIT {
  private static final String TABLE = "bus_tls_counters";
  private static final long CLIENT_TIMEOUT_MS = 2_000;
  private static final long FORGED = 1_000_000;

  private final List<Vertx> instances = new ArrayList<>();
  private Gateway gateway;
  private CounterClient member;
  private CounterClient intruder;
  private CounterClient impostor;
  private Vertx intruderVertx;
  private WebClient http;
  private Pool sql;

  @BeforeAll
  void startCluster() {
    ClusterCredentials credentials = ClusterCredentials.create();
    Path dir = credentials.dir();
    TestCertificates.Authority own = TestCertificates.authority("impostor CA");
    own.issue("impostor", "127.0.0.1").write(dir.resolve("impostor.crt"), dir.resolve("impostor.key"));
    Path ownCa = own.writeCertificate(dir.resolve("impostor-ca.crt"));

    List<Integer> ports = List.of(FreePorts.take(), FreePorts.take(), FreePorts.take(), FreePorts.take());
    JsonArray members = new JsonArray(ports.stream().map(port -> "127.0.0.1:" + port).toList());
    JsonObject database = TestDatabases.postgres();
    JsonObject raw = GatewayFixture.baseConfig(database, TABLE)
      .put("cluster", credentials.member("gateway", clusterConfig(ports.get(0), members)));
    GatewayConfig config = GatewayConfig.fromJson(raw);
    Vertx gatewayVertx = join(config.getCluster());
    gateway = await(Gateway.start(gatewayVertx, config, new PrometheusMeterRegistry(PrometheusConfig.DEFAULT)));
    http = WebClient.create(gatewayVertx, new WebClientOptions().setDefaultHost("127.0.0.1")
      .setDefaultPort(gateway.port()).setKeepAlive(false));

    member = new CounterClient(join(ClusterOptions.fromJson(credentials.member("member",
      clusterConfig(ports.get(1), members)))), CLIENT_TIMEOUT_MS);
    // both intruders hold the cluster's secret, so they are in Hazelcast's membership: only the bus's TLS keeps them out
    intruderVertx = added(await(Strangers.withoutCertificate(ClusterOptions.fromJson(credentials.member("intruder",
      clusterConfig(ports.get(2), members))))));
    intruder = new CounterClient(intruderVertx, CLIENT_TIMEOUT_MS);
    JsonObject impostorConfig = clusterConfig(ports.get(3), members).put("secret", credentials.secret())
      .put("tls", new JsonObject().put("certFile", dir.resolve("impostor.crt").toString())
        .put("keyFile", dir.resolve("impostor.key").toString()).put("caFile", ownCa.toString()));
    impostor = new CounterClient(join(ClusterOptions.fromJson(impostorConfig)), CLIENT_TIMEOUT_MS);
    sql = DirectSql.pool(gatewayVertx, "postgres");
    // the gateway's consumers reach the member's view of the cluster a while after it joined: every test's first
    // request must not be the one that waits for that
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (failed(member.ping())) {
      assertThat(System.nanoTime()).as("the member reaches the gateway within 30 s").isLessThan(deadline);
      GatewayProcess.sleep(100);
    }
  }

  private static JsonObject clusterConfig(int port, JsonArray members) {
    return new JsonObject().put("enabled", true).put("port", port).put("members", members.copy())
      .put("memberTimeout", "3s");
  }

  private Vertx join(ClusterOptions options) {
    return added(await(EventBusCluster.join(options)));
  }

  private Vertx added(Vertx vertx) {
    instances.add(vertx);
    return vertx;
  }

  @AfterAll
  void stopCluster() {
    if (gateway != null) {
      await(gateway.stop());
    }
    for (Vertx vertx : instances) {
      vertx.close().toCompletionStage().toCompletableFuture().orTimeout(30, TimeUnit.SECONDS).exceptionally(e -> null)
        .join();
    }
  }

  private long sumInTable(String id) {
    return await(sql.preparedQuery("SELECT COALESCE(SUM(count), 0) FROM " + TABLE
        + " WHERE record_type = 'likes' AND record_id = $1").execute(Tuple.of(id))
      .map(rows -> rows.iterator().next().getNumeric(0).longValue()));
  }

  /** Whether {@code attempt} failed (within the client's timeout): the bus gave the sender nothing. */
  private static boolean failed(Future<?> attempt) {
    attempt.toCompletionStage().toCompletableFuture().handle((value, failure) -> null).join();
    return attempt.failed();
  }

  @Test
  @DisplayName("a member holding a certificate of the cluster's CA increments, reads and resets through the gateway")
  void memberWithCertificateIsServed() {
    await(member.increment("likes", "member", 5));
    assertThat(await(member.get("likes", "member"))).isEqualTo(5L);
    assertThat(sumInTable("member")).isEqualTo(5L);
    await(member.reset("likes", "member"));
    assertThat(sumInTable("member")).isZero();
  }

  @Test
  @DisplayName("a member without the certificate, or with one of another CA, can neither reset, increment nor read a counter")
  void strangersCannotSend() {
    await(member.increment("likes", "guarded", 500));
    // all sent at once: each must fail, and a failure takes the client's timeout
    Map<String, Future<?>> attempts = new LinkedHashMap<>();
    for (CounterClient stranger : List.of(intruder, impostor)) {
      String who = stranger == intruder ? "without a certificate" : "with another CA's certificate";
      attempts.put("reset " + who, stranger.reset("likes", "guarded"));
      attempts.put("increment " + who, stranger.increment("likes", "guarded", FORGED));
      attempts.put("read " + who, stranger.get("likes", "guarded"));
      attempts.put("ping " + who, stranger.ping());
    }
    attempts.forEach((what, attempt) -> assertThat(failed(attempt)).as(what).isTrue());
    assertThat(sumInTable("guarded")).isEqualTo(500L);
    assertThat(await(member.get("likes", "guarded"))).isEqualTo(500L);
  }

  @Test
  @DisplayName("a stranger's consumers on counters.get and counters.ping never answer the gateway's HTTP reads or its readiness")
  void strangersConsumersNeverAnswerTheGateway() {
    await(member.increment("likes", "read-me", 7));
    List<io.vertx.core.eventbus.MessageConsumer<Object>> forged = List.of(
      intruderVertx.eventBus().consumer(Addresses.GET, message -> message.reply(new JsonObject().put("type", "likes")
        .put("values", new JsonObject().put("read-me", FORGED)))),
      intruderVertx.eventBus().consumer(Addresses.PING, message -> message.fail(503, "not ready")));
    forged.forEach(consumer -> await(consumer.completion()));
    await(intruderVertx.timer(1_000)); // the registrations reach every member's view

    for (int i = 0; i < 10; i++) {
      var read = await(http.get("/v1/counters/likes/read-me").send());
      assertThat(read.statusCode()).isEqualTo(200);
      assertThat(read.bodyAsJsonObject().getLong("value")).as("read " + i).isEqualTo(7L);
      assertThat(await(http.get("/health/ready").send()).statusCode()).as("readiness " + i).isEqualTo(200);
    }
    // a member's own reads are spread over every consumer of counters.get, the stranger's too: those fail (no TLS
    // connection to it is made), none is answered with its value; sent at once, the failed ones time out together
    List<Future<Long>> reads = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      reads.add(member.get("likes", "read-me"));
    }
    for (int i = 0; i < reads.size(); i++) {
      if (!failed(reads.get(i))) {
        assertThat(reads.get(i).result()).as("member read " + i).isEqualTo(7L);
      }
    }
    forged.forEach(consumer -> await(consumer.unregister()));
  }
}
