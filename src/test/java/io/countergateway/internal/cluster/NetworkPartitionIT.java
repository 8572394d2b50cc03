package io.countergateway.internal.cluster;

import io.countergateway.CounterClient;
import io.countergateway.CounterException;
import io.countergateway.config.ClusterOptions;
import io.countergateway.testing.ClusterCredentials;
import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.GatewayProcess;
import io.countergateway.testing.Ledger;
import io.countergateway.testing.NetworkHosts;
import io.countergateway.testing.PostgresOnHost;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
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
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Three gateways and their PostgreSQL on four hosts of a private network the test builds itself (network namespaces
 * joined by a bridge, {@link NetworkHosts}); this JVM, on the bridge, is the clients and a fourth member of the
 * clustered event bus. Under load through every door, three faults in turn, each healed without a restart: (a) one
 * gateway's link to the database dropped silently, (b) the cluster split {g1, g2, clients} | {g3}, (c) the database
 * host paused (SIGSTOP). After each: every 200/202/204 counted exactly once, each request on a counter of its own.
 * Skipped, with the reason, where namespaces, nftables or a PostgreSQL server are missing, or without root.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class NetworkPartitionIT {
  private static final String TABLE = "partition_counters";
  private static final List<String> GATEWAYS = List.of("g1", "g2", "g3");
  private static final int HTTP_PORT = 8080;
  private static final int CLUSTER_PORT = 5701;
  private static final int BUS_PORT = 5702;
  private static final int MEMBER_TIMEOUT_SECONDS = 3;
  private static final long FAULT_MILLIS = 6_000;
  private static final long BUS_TIMEOUT_MS = 5_000;
  private static final int HTTP_SENDERS = 12;
  private static final int BUS_SENDERS = 4;
  /** Requests acknowledged through each door that make the load before a fault, and after its heal. */
  private static final int ACKNOWLEDGED_PER_DOOR = 30;
  private static final String BROWSER = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
    + "Chrome/120.0 Safari/537.36";

  private NetworkHosts hosts;
  private ClusterCredentials credentials;
  private PostgresOnHost postgres;
  private final Map<String, GatewayProcess> gateways = new LinkedHashMap<>();
  private Vertx vertx;
  private WebClient http;
  private CounterClient bus;
  private Pool sql;
  private final List<String> report = new ArrayList<>();

  @BeforeAll
  void buildHosts() {
    String unavailable = NetworkHosts.unavailableBecause();
    assumeTrue(unavailable == null, unavailable);
    assumeTrue(PostgresOnHost.binaries() != null,
      "no PostgreSQL server binaries under /usr/lib/postgresql (Debian package postgresql) to run on the database host");
    hosts = NetworkHosts.create(List.of("db", "g1", "g2", "g3"));
    postgres = PostgresOnHost.start(hosts, "db", Duration.ofSeconds(60));
    List<String> addresses = new ArrayList<>(GATEWAYS.stream().map(hosts::address).toList());
    addresses.add(NetworkHosts.GATEWAY_ADDRESS);
    credentials = ClusterCredentials.create(addresses.toArray(String[]::new));
    vertx = await(EventBusCluster.join(ClusterOptions.fromJson(clusterConfig(NetworkHosts.GATEWAY_ADDRESS))));
    Pool admin = pool(postgres.config("postgres"));
    await(admin.query("CREATE DATABASE counters").execute());
    await(admin.close());
    for (String name : GATEWAYS) {
      gateways.put(name, GatewayProcess.start("partition-" + name, gatewayConfig(name), "192m", hosts.launcher(name)));
    }
    gateways.values().forEach(gateway -> gateway.awaitListening(Duration.ofSeconds(90)));
    http = WebClient.create(vertx, new WebClientOptions().setConnectTimeout(2_000).setIdleTimeout(20)
        .setIdleTimeoutUnit(TimeUnit.SECONDS).setUserAgent(BROWSER),
      new PoolOptions().setHttp1MaxSize(HTTP_SENDERS));
    bus = new CounterClient(vertx, BUS_TIMEOUT_MS);
    sql = pool(postgres.config("counters"));
    warmUp();
  }

  /**
   * Load until every gateway is ready and has taken a few seconds of it, so the first fault does not meet the
   * slowness of first flushes and cold JIT (seen on a loaded machine as a peer's flush timing out).
   */
  private void warmUp() {
    Load load = new Load("warmup");
    load.start();
    GatewayProcess.sleep(3_000);
    awaitTrue(Duration.ofSeconds(60), () -> GATEWAYS.stream().allMatch(g -> await(health(g, "ready")) == 200),
      "every gateway ready after warming up");
    load.stop();
    awaitTrue(Duration.ofSeconds(30), load::finished, "every warm-up request answered");
  }

  @AfterAll
  void tearDown() {
    report.forEach(System.out::println);
    try {
      if (vertx != null) {
        vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
      }
    } catch (Exception e) {
      System.out.println("closing the test's Vert.x: " + e);
    } finally {
      gateways.values().forEach(GatewayProcess::close);
      if (postgres != null) {
        postgres.close();
      }
      if (hosts != null) {
        hosts.close();
      }
    }
  }

  @Test
  @Order(1)
  @DisplayName("a gateway whose link to the database drops silently turns not ready but keeps accepting, its peers stay"
    + " ready, and after healing every 2xx is counted exactly once")
  void silentlyDroppedDatabaseLink() {
    Fault fault = underLoad("link", () -> hosts.cut("g1", "db"), () -> hosts.heal("g1"));

    assertThat(fault.readySeen("g1")).as("g1 cannot write: not ready").contains(503);
    assertThat(fault.acceptingSeen("g1")).as("g1 still journals accepted increments").doesNotContain(503);
    for (String peer : List.of("g2", "g3")) {
      assertThat(fault.mostlyReady(peer)).as(peer + " keeps its link: ready " + fault.readySeen(peer)).isTrue();
      assertThat(fault.acceptingSeen(peer)).as(peer + " accepts").doesNotContain(503);
    }
  }

  @Test
  @Order(2)
  @DisplayName("the cluster split 2 | 1: both sides stay ready (each reaches the database), every 2xx is counted exactly"
    + " once, and the event bus heals without a restart")
  void clusterSplitTwoAgainstOne() {
    Fault fault = underLoad("split", () -> hosts.cutPorts("g3", List.of(CLUSTER_PORT, BUS_PORT)),
      () -> hosts.heal("g3"));

    for (String gateway : GATEWAYS) {
      assertThat(fault.mostlyReady(gateway)).as(gateway + " reaches the database: ready " + fault.readySeen(gateway))
        .isTrue();
      assertThat(fault.acceptingSeen(gateway)).as(gateway + " accepts").doesNotContain(503);
    }
    assertThat(fault.busHealedMillis).as("bus requests reach g3 again").isPositive();
  }

  @Test
  @Order(3)
  @DisplayName("the database host paused: every gateway turns not ready and keeps accepting, and after SIGCONT every"
    + " 2xx is counted exactly once")
  void databaseHostPaused() {
    Fault fault = underLoad("pause", postgres::pause, postgres::resume);

    for (String gateway : GATEWAYS) {
      assertThat(fault.readySeen(gateway)).as(gateway + " cannot write: not ready").contains(503);
      assertThat(fault.acceptingSeen(gateway)).as(gateway + " journals accepted increments").doesNotContain(503);
    }
  }

  /**
   * Load through every door until each has acknowledged {@link #ACKNOWLEDGED_PER_DOOR} requests (1.5 s at most), the
   * fault for {@link #FAULT_MILLIS} with readiness sampled, then healed; the load runs on until every gateway is ready
   * again (and, after a split, bus requests reach every gateway) and each door has acknowledged as many again (1 s at
   * most), then the gateways drain and every request is checked against the table.
   */
  private Fault underLoad(String label, Runnable apply, Runnable heal) {
    Fault fault = new Fault(label);
    LockWaitSampler locks = LockWaitSampler.start(vertx, sql, true, TABLE);
    Load load = new Load(label);
    load.start();
    load.awaitAcknowledged(ACKNOWLEDGED_PER_DOOR, 1_500);
    apply.run();
    long probes = vertx.setPeriodic(250, id -> GATEWAYS.forEach(gateway -> fault.probe(gateway, this::health)));
    GatewayProcess.sleep(FAULT_MILLIS);
    vertx.cancelTimer(probes);
    fault.close();
    heal.run();
    long healed = System.nanoTime();
    awaitTrue(Duration.ofSeconds(40), () -> GATEWAYS.stream().allMatch(g -> await(health(g, "ready")) == 200),
      "every gateway ready again after " + label);
    fault.readyAgainMillis = (System.nanoTime() - healed) / 1_000_000;
    awaitTrue(Duration.ofSeconds(40), () -> busReachesEveryGateway(label),
      "bus requests reach every gateway after " + label);
    fault.busHealedMillis = (System.nanoTime() - healed) / 1_000_000;
    load.awaitAcknowledged(ACKNOWLEDGED_PER_DOOR, 1_000);
    load.stop();
    awaitTrue(Duration.ofSeconds(30), load::finished, "every request of " + label + " answered");
    locks.stop();
    Map<String, Long> sums = awaitSettled(label, load);
    Ledger.Verdict verdict = verdict(label, load.outcomes, sums);
    report.add(String.format("| %s | %s | %,d ms | %,d ms | %d (%d between hosts) of %d | %s |", label,
      table(verdict), fault.readyAgainMillis, fault.busHealedMillis, locks.rowLockSamples(),
      locks.crossHostSamples.get(), locks.samples.get(), fault.readinessSummary()));
    System.out.println(report.get(report.size() - 1) + " lock waits " + locks.samplesByWait + " " + locks.exampleQuery);
    assertThat(verdict.violations).as(table(verdict)).hasSizeLessThan(1);
    assertThat(verdict.answered).as("acknowledged requests during " + label).isPositive();
    assertThat(locks.crossHostSamples.get()).as("replicas never wait on each other's row locks: " + locks.exampleQuery)
      .isZero();
    return fault;
  }

  /** The table settles once every acknowledged increment of the label is in it (accepted ones land a flush later). */
  private Map<String, Long> awaitSettled(String label, Load load) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    Map<String, Long> sums = sumsInTable(label);
    while (System.nanoTime() < deadline && !verdict(label, load.outcomes, sums).violations.isEmpty()) {
      GatewayProcess.sleep(250);
      sums = sumsInTable(label);
    }
    return sums;
  }

  /** 60 bus requests on a namespace nothing else writes; each gateway's meter shows it took some. */
  private boolean busReachesEveryGateway(String label) {
    Map<String, Double> before = new HashMap<>();
    GATEWAYS.forEach(gateway -> before.put(gateway, likesTaken(gateway)));
    List<Future<Void>> sent = new ArrayList<>();
    for (int i = 0; i < 60; i++) {
      sent.add(bus.increment("likes", "bus-" + label + "-" + i, 1));
    }
    try {
      await(Future.join(sent));
    } catch (RuntimeException timedOut) {
      System.out.println("bus check after " + label + ": " + timedOut);
      return false;
    }
    Map<String, Double> after = new HashMap<>();
    GATEWAYS.forEach(gateway -> after.put(gateway, likesTaken(gateway)));
    System.out.println("bus check after " + label + ": likes taken before " + before + ", after " + after);
    return GATEWAYS.stream().allMatch(gateway -> after.get(gateway) > before.get(gateway));
  }

  private double likesTaken(String gateway) {
    try {
      String metrics = await(http.get(HTTP_PORT, hosts.address(gateway), "/metrics").timeout(5_000).send()).bodyAsString();
      return metrics.lines().filter(line -> line.startsWith("gateway_namespace_increments_total")
          && line.contains("namespace=\"likes\""))
        .mapToDouble(line -> Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1))).sum();
    } catch (RuntimeException unreachable) {
      return -1;
    }
  }

  /** The status of {@code /health/<check>} on {@code gateway}; 0 when it does not answer within 3 s. */
  private Future<Integer> health(String gateway, String check) {
    return http.get(HTTP_PORT, hosts.address(gateway), "/health/" + check).timeout(3_000).send()
      .map(HttpResponse::statusCode).otherwise(0);
  }

  private Map<String, Long> sumsInTable(String label) {
    return await(sql.preparedQuery("SELECT record_id, SUM(count) FROM " + TABLE + " WHERE record_id LIKE $1"
      + " GROUP BY record_id").execute(Tuple.of(label + "-%")).map(rows -> {
        Map<String, Long> sums = new HashMap<>();
        for (Row row : rows) {
          sums.put(row.getString(0), row.getNumeric(1).longValue());
        }
        return sums;
      }));
  }

  private static void awaitTrue(Duration timeout, java.util.function.BooleanSupplier condition, String what) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime()).as(what + " within " + timeout).isLessThan(deadline);
      GatewayProcess.sleep(200);
    }
  }

  private JsonObject gatewayConfig(String name) {
    JsonObject config = GatewayFixture.baseConfig(postgres.config("counters"), TABLE);
    config.getJsonObject("http").put("host", hosts.address(name)).put("port", HTTP_PORT);
    config.put("auth", new JsonObject().put("anonymous", true));
    config.put("cluster", clusterConfig(hosts.address(name)));
    // short enough that a silent link costs about two seconds, not the default fifteen
    config.put("batching", new JsonObject().put("writeTimeout", "2s").put("retryBackoffMax", "500ms"));
    config.getJsonObject("limits").put("requestTimeout", "4s");
    JsonObject beaconsUnlimited = new JsonObject().put("perClientPerMinute", 0).put("idsPerClientPerHour", 0);
    // 3 replicas x 2 ingest verticles x 2 slots per lane
    config.getJsonObject("namespaces").getJsonObject("pageviews").put("slots", 12).put("beacon", beaconsUnlimited);
    config.getJsonObject("namespaces").getJsonObject("downloads").put("slots", 12);
    config.getJsonObject("namespaces").getJsonObject("likes").put("slots", 12);
    return config;
  }

  private JsonObject clusterConfig(String address) {
    JsonArray members = new JsonArray();
    GATEWAYS.stream().map(hosts::address).filter(member -> !member.equals(address))
      .forEach(member -> members.add(member + ":" + CLUSTER_PORT));
    if (!address.equals(NetworkHosts.GATEWAY_ADDRESS)) {
      members.add(NetworkHosts.GATEWAY_ADDRESS + ":" + CLUSTER_PORT);
    }
    return credentials.member(address, new JsonObject().put("enabled", true).put("name", "partition-test")
      .put("host", address).put("port", CLUSTER_PORT).put("busPort", BUS_PORT).put("members", members)
      .put("memberTimeout", MEMBER_TIMEOUT_SECONDS + "s"));
  }

  private Pool pool(JsonObject database) {
    return PgBuilder.pool().connectingTo(new PgConnectOptions().setHost(database.getString("host"))
        .setPort(database.getInteger("port")).setDatabase(database.getString("name"))
        .setUser(database.getString("user")))
      .using(vertx).build();
  }

  /** The doors an increment can come through; each request is one increment on a counter of its own. */
  private enum Door { COMMIT, ACCEPTED, BEACON, BUS_REQUEST, BUS_SEND }

  /** What one request got: an HTTP status (0: no answer), or the bus's. */
  private record Outcome(String id, Door door, int status, String error) {
    boolean acknowledged() {
      return status == 200 || status == 202 || status == 204;
    }

    /** Nothing was taken: a 503 (shed, withdrawn, no consumer), a 4xx. */
    boolean refused() {
      return status == 503 || status >= 400 && status < 500;
    }
  }

  /**
   * HTTP senders walking the gateways and the HTTP doors in turn, and bus senders alternating request and send; each
   * sends its next request when the last is answered.
   */
  private final class Load {
    private final String label;
    private final AtomicLong sequence = new AtomicLong();
    private final AtomicInteger running = new AtomicInteger();
    private final AtomicBoolean stopping = new AtomicBoolean();
    final List<Outcome> outcomes = new CopyOnWriteArrayList<>();

    Load(String label) {
      this.label = label;
    }

    void start() {
      for (int sender = 0; sender < HTTP_SENDERS; sender++) {
        int first = sender;
        vertx.runOnContext(v -> next(first));
      }
      for (int sender = 0; sender < BUS_SENDERS; sender++) {
        int first = sender;
        vertx.runOnContext(v -> nextOnBus(first));
      }
    }

    private void next(int turn) {
      if (stopping.get()) {
        return;
      }
      String gateway = hosts.address(GATEWAYS.get(turn % GATEWAYS.size()));
      Door door = List.of(Door.COMMIT, Door.ACCEPTED, Door.BEACON).get((turn / GATEWAYS.size()) % 3);
      String id = label + "-" + sequence.incrementAndGet();
      Future<HttpResponse<Buffer>> answer = switch (door) {
        case COMMIT -> http.post(HTTP_PORT, gateway, "/v1/counters/downloads/" + id + "/increments").send();
        case ACCEPTED -> http.post(HTTP_PORT, gateway, "/v1/counters/downloads/" + id + "/increments")
          .addQueryParam("ack", "accepted").send();
        default -> http.get(HTTP_PORT, gateway, "/v1/beacon/pageviews/" + id).send();
      };
      running.incrementAndGet();
      answer.onComplete(done -> {
        outcomes.add(done.succeeded()
          ? new Outcome(id, door, done.result().statusCode(), errorCode(done.result()))
          : new Outcome(id, door, 0, done.cause().getClass().getSimpleName()));
        running.decrementAndGet();
        next(turn + 1);
      });
    }

    private void nextOnBus(int turn) {
      if (stopping.get()) {
        return;
      }
      String id = label + "-" + sequence.incrementAndGet();
      if (turn % 2 == 1) {
        // a send has no answer by design: counted at most once
        bus.incrementAccepted("downloads", id, 1);
        outcomes.add(new Outcome(id, Door.BUS_SEND, 0, "no answer by design"));
        vertx.setTimer(5, t -> nextOnBus(turn + 1));
        return;
      }
      running.incrementAndGet();
      bus.increment("downloads", id, 1).onComplete(done -> {
        CounterException error = done.failed() && done.cause() instanceof CounterException api ? api : null;
        outcomes.add(done.succeeded() ? new Outcome(id, Door.BUS_REQUEST, 200, null)
          : error == null ? new Outcome(id, Door.BUS_REQUEST, 0, String.valueOf(done.cause()))
          : new Outcome(id, Door.BUS_REQUEST, error.code().equals("unavailable") ? 503 : error.status(), error.code()));
        running.decrementAndGet();
        nextOnBus(turn + 1);
      });
    }

    /**
     * Waits until each door that answers has acknowledged {@code count} requests more than when called, or
     * {@code maxMillis}.
     */
    void awaitAcknowledged(int count, long maxMillis) {
      int from = outcomes.size();
      long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(maxMillis);
      Set<Door> answering = Set.of(Door.COMMIT, Door.ACCEPTED, Door.BEACON, Door.BUS_REQUEST);
      while (System.nanoTime() < deadline) {
        // the list's stream is a snapshot; a sublist of a copy-on-write list fails once the senders add to it
        Map<Door, Long> acknowledged = outcomes.stream().skip(from).filter(Outcome::acknowledged)
          .collect(Collectors.groupingBy(Outcome::door, Collectors.counting()));
        if (answering.stream().allMatch(door -> acknowledged.getOrDefault(door, 0L) >= count)) {
          return;
        }
        GatewayProcess.sleep(50);
      }
    }

    void stop() {
      stopping.set(true);
    }

    boolean finished() {
      return stopping.get() && running.get() == 0;
    }

    private static String errorCode(HttpResponse<Buffer> response) {
      try {
        JsonObject body = response.bodyAsJsonObject();
        return body == null ? null : body.getString("error");
      } catch (RuntimeException notJson) {
        return null;
      }
    }
  }

  /** Every request against the table by the suite's one oracle: a 2xx counted exactly once, a refusal never, the rest at most once. */
  private static Ledger.Verdict verdict(String label, List<Outcome> outcomes, Map<String, Long> sums) {
    Ledger ledger = Ledger.named(label);
    for (Outcome outcome : outcomes) {
      String answer = outcome.status() + (outcome.error() == null ? "" : " " + outcome.error());
      ledger.record(outcome.id(), 1, outcome.acknowledged() ? Ledger.Promise.COUNTED
        : outcome.refused() ? Ledger.Promise.NOT_COUNTED : Ledger.Promise.AT_MOST_ONCE, answer);
    }
    return ledger.against(sums);
  }

  /** sent | 2xx | 503 | unknown (landed) | SUM | statuses */
  private static String table(Ledger.Verdict verdict) {
    return String.format("%,d | %,d | %,d | %,d (%,d) | %,d | %s", verdict.requests, verdict.answered,
      verdict.count("503"), verdict.unknown, verdict.unknownLanded, verdict.sum, verdict.answers);
  }

  /** Readiness of each gateway as sampled during the fault, and how long healing took. */
  private static final class Fault {
    final String label;
    final Map<String, List<Integer>> ready = new ConcurrentHashMap<>();
    final Map<String, List<Integer>> accepting = new ConcurrentHashMap<>();
    private final Set<String> probing = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;
    long readyAgainMillis;
    long busHealedMillis;

    Fault(String label) {
      this.label = label;
    }

    /**
     * Asks {@code gateway} both questions unless its last probe is still unanswered: each gateway is probed on its
     * own, so one that answers slowly does not thin the others' samples.
     */
    void probe(String gateway, java.util.function.BiFunction<String, String, Future<Integer>> health) {
      if (closed || !probing.add(gateway)) {
        return;
      }
      Future<Integer> readyNow = health.apply(gateway, "ready");
      Future<Integer> acceptingNow = health.apply(gateway, "accepting");
      Future.join(readyNow, acceptingNow).onComplete(done -> {
        if (!closed) {
          ready.computeIfAbsent(gateway, g -> new CopyOnWriteArrayList<>()).add(readyNow.result());
          accepting.computeIfAbsent(gateway, g -> new CopyOnWriteArrayList<>()).add(acceptingNow.result());
        }
        probing.remove(gateway);
      });
    }

    /** Answers that come after the fault is healed are not the fault's. */
    void close() {
      closed = true;
    }

    List<Integer> readySeen(String gateway) {
      return ready.getOrDefault(gateway, List.of());
    }

    /**
     * Ready (200) in more samples than not. A ready gateway on a machine this loaded can still miss a sample: its
     * readiness ping or a flush outlasts its timeout, or its answer outlasts the 3 s of the probe (0).
     */
    boolean mostlyReady(String gateway) {
      List<Integer> seen = readySeen(gateway);
      long ready = seen.stream().filter(status -> status == 200).count();
      return ready > seen.size() - ready;
    }

    List<Integer> acceptingSeen(String gateway) {
      return accepting.getOrDefault(gateway, List.of());
    }

    /** e.g. {@code g1 ready 200×3 503×20, accepting 200×23} per gateway. */
    String readinessSummary() {
      return GATEWAYS.stream().map(g -> g + " ready " + counts(readySeen(g)) + ", accepting "
        + counts(acceptingSeen(g))).collect(Collectors.joining("; "));
    }

    private static String counts(List<Integer> statuses) {
      return new TreeMap<>(statuses.stream().collect(Collectors.groupingBy(s -> s, Collectors.counting())))
        .entrySet().stream().map(e -> e.getKey() + "×" + e.getValue()).collect(Collectors.joining(" "));
    }
  }
}
