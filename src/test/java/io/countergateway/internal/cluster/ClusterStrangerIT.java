package io.countergateway.internal.cluster;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.hazelcast.client.HazelcastClient;
import com.hazelcast.client.config.ClientConfig;
import com.hazelcast.core.HazelcastInstance;
import io.countergateway.CounterClient;
import io.countergateway.Gateway;
import io.countergateway.config.ClusterOptions;
import io.countergateway.config.GatewayConfig;
import io.countergateway.internal.bus.Addresses;
import io.countergateway.testing.ClusterCredentials;
import io.countergateway.testing.DirectSql;
import io.countergateway.testing.FreePorts;
import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.GatewayProcess;
import io.countergateway.testing.TestDatabases;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A gateway and a member that hold the cluster's certificate and secret, and a stranger that knows the rest of the
 * configuration: the default cluster name, the members' addresses and ports, all on loopback. The stranger is a Vert.x
 * clustered as any process would cluster one, consuming every {@code counters.*} address and answering each message
 * as a gateway that committed it. All in this JVM, as separate Vert.x instances and Hazelcast members.
 */
@DisplayName("Members only on the clustered event bus: a stranger with the cluster's name but not its secret or certificate")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ClusterStrangerIT {
  private static final String TABLE = "bus_stranger_counters";
  private static final long CLIENT_TIMEOUT_MS = 2_000;
  private static final int INCREMENTS = 2_000;

  private final List<Vertx> instances = new ArrayList<>();
  private final AtomicLong reachedStranger = new AtomicLong();
  private Gateway gateway;
  private HazelcastInstance gatewayHazelcast;
  private CounterClient member;
  private Vertx strangerVertx;
  private CounterClient stranger;
  private WebClient http;
  private Pool sql;
  private int gatewayClusterPort;
  private ClusterOptions gatewayCluster;
  private final ListAppender<ILoggingEvent> logged = new ListAppender<>();

  private static ch.qos.logback.classic.Logger root() {
    return ((LoggerContext) LoggerFactory.getILoggerFactory()).getLogger(Logger.ROOT_LOGGER_NAME);
  }

  @BeforeAll
  void startCluster() {
    logged.setContext((LoggerContext) LoggerFactory.getILoggerFactory());
    logged.start();
    root().addAppender(logged);
    ClusterCredentials credentials = ClusterCredentials.create();
    List<Integer> ports = List.of(FreePorts.take(), FreePorts.take(), FreePorts.take());
    gatewayClusterPort = ports.get(0);
    JsonArray members = new JsonArray(ports.stream().map(port -> "127.0.0.1:" + port).toList());
    GatewayConfig config = GatewayConfig.fromJson(GatewayFixture.baseConfig(TestDatabases.postgres(), TABLE)
      .put("cluster", credentials.member("gateway", clusterConfig(ports.get(0), members))));
    gatewayCluster = config.getCluster();
    Vertx gatewayVertx = added(await(EventBusCluster.join(gatewayCluster)));
    gatewayHazelcast = hazelcast(gatewayVertx);
    gateway = await(Gateway.start(gatewayVertx, config, new PrometheusMeterRegistry(PrometheusConfig.DEFAULT)));
    http = WebClient.create(gatewayVertx, new WebClientOptions().setDefaultHost("127.0.0.1")
      .setDefaultPort(gateway.port()).setKeepAlive(false));
    sql = DirectSql.pool(gatewayVertx, "postgres");
    member = new CounterClient(added(await(EventBusCluster.join(ClusterOptions.fromJson(
      credentials.member("member", clusterConfig(ports.get(1), members)))))), CLIENT_TIMEOUT_MS);

    // everything of a member's configuration but the secret and the certificate: the cluster's name is the default
    ClusterOptions strangers = ClusterOptions.fromJson(credentials.member("stranger", clusterConfig(ports.get(2), members)));
    assertThat(strangers.getName()).isEqualTo("counter-gateway");
    strangerVertx = added(await(Strangers.byNameOnly(strangers)));
    stranger = new CounterClient(strangerVertx, CLIENT_TIMEOUT_MS);
    for (String address : List.of(Addresses.INCREMENT, Addresses.GET, Addresses.RESET, Addresses.PING)) {
      MessageConsumer<Object> consumer = strangerVertx.eventBus().consumer(address, message -> {
        reachedStranger.incrementAndGet();
        message.reply(new JsonObject());
      });
      await(consumer.completion());
    }
    awaitMemberServed();
  }

  private static JsonObject clusterConfig(int port, JsonArray members) {
    return new JsonObject().put("enabled", true).put("port", port).put("members", members.copy())
      .put("memberTimeout", "3s");
  }

  private Vertx added(Vertx vertx) {
    instances.add(vertx);
    return vertx;
  }

  private static HazelcastInstance hazelcast(Vertx vertx) {
    return ((HazelcastClusterManager) ((VertxInternal) vertx).clusterManager()).getHazelcastInstance();
  }

  /** The gateway's consumers reach the member's view a while after it joined: no test's first request waits for it. */
  private void awaitMemberServed() {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (failed(member.ping())) {
      assertThat(System.nanoTime()).as("the member reaches the gateway within 30 s").isLessThan(deadline);
      GatewayProcess.sleep(100);
    }
  }

  @AfterAll
  void stopCluster() {
    root().detachAppender(logged);
    if (gateway != null) {
      await(gateway.stop());
    }
    for (Vertx vertx : instances) {
      vertx.close().toCompletionStage().toCompletableFuture().orTimeout(30, TimeUnit.SECONDS).exceptionally(e -> null)
        .join();
    }
  }

  private static boolean failed(Future<?> attempt) {
    attempt.toCompletionStage().toCompletableFuture().handle((value, failure) -> null).join();
    return attempt.failed();
  }

  private long sumInTable(String id) {
    return await(sql.preparedQuery("SELECT COALESCE(SUM(count), 0) FROM " + TABLE
        + " WHERE record_type = 'downloads' AND record_id = $1").execute(Tuple.of(id))
      .map(rows -> rows.iterator().next().getNumeric(0).longValue()));
  }

  @Test
  @DisplayName("the stranger cannot join: it stays a cluster of its own, and the members' cluster has the two of them only")
  void strangerCannotJoin() {
    assertThat(hazelcast(strangerVertx).getCluster().getMembers()).as("the stranger's cluster").hasSize(1);
    assertThat(gatewayHazelcast.getCluster().getMembers()).as("the members' cluster").hasSize(2)
      .noneMatch(m -> m.getUuid().equals(hazelcast(strangerVertx).getCluster().getLocalMember().getUuid()));
    assertThat(hazelcast(strangerVertx).getMultiMap("__vertx.subs").keySet())
      .as("the only registrations the stranger sees are its own").hasSize(4)
      .allSatisfy(address -> assertThat(hazelcast(strangerVertx).getMultiMap("__vertx.subs").get(address)).hasSize(1));
  }

  @Test
  @DisplayName("the stranger answers nothing: 2,000 increments from a member are all acknowledged by the gateway, none reaches the stranger, the SUM is exact")
  void strangerAcknowledgesNothing() {
    long reachedBefore = reachedStranger.get();
    List<Future<Void>> acks = new ArrayList<>();
    long acknowledged = 0;
    for (int i = 0; i < INCREMENTS; i++) {
      acks.add(member.increment("downloads", "members-only", 1));
      if (acks.size() == 200) {
        acknowledged += acks.stream().filter(ack -> !failed(ack)).count();
        acks.clear();
      }
    }
    acknowledged += acks.stream().filter(ack -> !failed(ack)).count();

    assertThat(reachedStranger.get() - reachedBefore).as("messages that reached the stranger").isZero();
    assertThat(acknowledged).isEqualTo(INCREMENTS);
    assertThat(sumInTable("members-only")).as("the ledger").isEqualTo(INCREMENTS);
    var read = await(http.get("/v1/counters/downloads/members-only").send());
    assertThat(read.statusCode()).isEqualTo(200);
    assertThat(read.bodyAsJsonObject().getLong("value")).isEqualTo(INCREMENTS);
  }

  @Test
  @DisplayName("the stranger can neither increment, reset nor read a counter through the bus: its messages reach only itself")
  void strangerCannotSend() {
    await(member.increment("downloads", "guarded", 500));
    long reachedBefore = reachedStranger.get();
    Future<Void> increment = stranger.increment("downloads", "guarded", 1_000_000);
    Future<Void> reset = stranger.reset("downloads", "guarded");
    Future<Long> read = stranger.get("downloads", "guarded");
    failed(increment);
    failed(reset);
    assertThat(failed(read) || read.result() != 500L).as("the stranger never reads the gateway's value").isTrue();
    assertThat(reachedStranger.get() - reachedBefore).as("its own consumers took its messages").isPositive();
    assertThat(sumInTable("guarded")).isEqualTo(500L);
    assertThat(await(member.get("downloads", "guarded"))).isEqualTo(500L);
  }

  @Test
  @DisplayName("a Hazelcast client with the cluster's name cannot connect to read the maps; one with the membership name can")
  void mapsNeedTheSecret() {
    ClientConfig byName = clientConfig(gatewayCluster.getName());
    assertThatThrownBy(() -> HazelcastClient.newHazelcastClient(byName).shutdown())
      .as("a client knowing only the cluster's name").isInstanceOf(IllegalStateException.class);

    HazelcastInstance holder = HazelcastClient.newHazelcastClient(clientConfig(gatewayCluster.getMembershipName()));
    try {
      assertThat(holder.getMultiMap("__vertx.subs").get(Addresses.INCREMENT))
        .as("what the secret guards: the gateway's registrations").isNotEmpty();
    } finally {
      holder.shutdown();
    }
  }

  private ClientConfig clientConfig(String clusterName) {
    ClientConfig config = new ClientConfig().setClusterName(clusterName);
    config.setProperty("hazelcast.logging.type", "slf4j");
    // a client prefixes its lines with the name it connects by, as a member would without this
    config.setProperty("hazelcast.logging.details.enabled", "false");
    config.getNetworkConfig().addAddress("127.0.0.1:" + gatewayClusterPort);
    config.getConnectionStrategyConfig().getConnectionRetryConfig().setClusterConnectTimeoutMillis(3_000);
    return config;
  }

  @Test
  @DisplayName("the membership name, which admits its holders, is in no line the members logged")
  void membershipNameIsNotLogged() {
    String name = gatewayCluster.getMembershipName();
    List<String> lines;
    synchronized (logged.list) {
      // the test's own Hazelcast client (mapsNeedTheSecret) names the cluster it connects to; no member runs one
      lines = logged.list.stream().filter(event -> !event.getLoggerName().startsWith("com.hazelcast.client"))
        .map(ILoggingEvent::getFormattedMessage).toList();
    }
    assertThat(lines).as("lines logged since the start").isNotEmpty().noneMatch(line -> line.contains(name));
  }
}
