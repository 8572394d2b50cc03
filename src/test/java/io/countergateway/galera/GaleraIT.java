package io.countergateway.galera;

import io.countergateway.config.Knobs;
import io.countergateway.testing.GatewayFixture;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A 3-node MariaDB Galera cluster on loopback ({@code src/galera/galera-cluster.sh}), one gateway replica per node,
 * all committing increments of one hot counter: with lanes, and in a control run where every replica writes the
 * same single slot. In every {@code mvn verify} ({@code mvn verify -Pgalera} runs it alone); skipped, with the reason,
 * where mariadbd, its tools or Debian's galera-4 is missing.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class GaleraIT {
  private static final Path SCRIPT = Paths.get("src/galera/galera-cluster.sh");
  private static final Path DIR = Paths.get("target/galera").toAbsolutePath();
  /** The script's port layout: node i's SQL on base + i, group communication, IST and SST on base + 10/20/30 + i. */
  private static final int[] PORT_OFFSETS = {1, 2, 3, 11, 12, 13, 21, 22, 23, 31, 32, 33};
  private static final int SENDERS_PER_REPLICA = 8;
  private static final long LOAD_MILLIS = 5_000;
  private static final java.time.Duration SUM_PATIENCE = java.time.Duration.ofSeconds(60);
  private final List<String> results = new ArrayList<>();
  private int basePort;
  /** Stops the nodes if this JVM is ended (a Failsafe timeout, Ctrl-C) before {@link #stopCluster()} runs. */
  private final Thread stopOnExit = new Thread(() -> {
    try {
      script("stop");
    } catch (IOException | InterruptedException e) {
      // the JVM is exiting: nothing left to report to
    }
  });

  @BeforeAll
  void startCluster() throws Exception {
    assumeTrue(Files.exists(Paths.get("/usr/lib/galera/libgalera_smm.so")),
      "Debian's galera-4 is not installed (/usr/lib/galera/libgalera_smm.so): apt-get install galera-4 (.ci/run does)");
    assumeTrue(Files.isExecutable(Paths.get("/usr/sbin/mariadbd")),
      "mariadbd is not installed (/usr/sbin/mariadbd): apt-get install mariadb-server-core (.ci/run does)");
    for (String command : List.of("mariadb-install-db", "mariadb", "rsync")) {
      assumeTrue(onPath(command), command + " is not on the PATH (Debian: mariadb-server-core, mariadb-client-core, rsync;"
        + " .ci/run installs them): the Galera nodes need it");
    }
    basePort = freeBasePort();
    // before the first node starts, so that nodes of a run that fails half-way are stopped too
    Runtime.getRuntime().addShutdownHook(stopOnExit);
    script("stop");
    deleteRecursively(DIR);
    assertThat(script("start")).as("the Galera cluster starts (target/galera-script.log)").isZero();
  }

  /** JUnit runs this after a failed or aborted {@link #startCluster()} too: whatever node started is stopped. */
  @AfterAll
  void stopCluster() throws Exception {
    script("stop");
    Runtime.getRuntime().removeShutdownHook(stopOnExit);
    System.out.printf("| run | sent | 200 | other | SUM node 1 / 2 / 3 | cert failures | BF aborts | flush retries |%n"
      + "|---|---:|---:|---:|---|---:|---:|---:|%n%s%n", String.join("\n", results));
  }

  @Test
  @DisplayName("three replicas on three Galera nodes with lanes: the SUM is exact on every node, replicated writes meet no local lock")
  void withLanes() throws InterruptedException {
    Conflicts conflicts = run("lanes, 12 slots", "galera_lanes", true, 12);
    assertThat(conflicts.certificationFailures()).as("certification failures with lanes").isLessThanOrEqualTo(5);
    // Each abort of a local transaction by a replicated write is a chance for the abort to be missed, which stalls
    // the cluster (docs/scaling.md "MariaDB Galera"): with lanes, replicas share no row and, at READ COMMITTED, no gap
    // either, so there is next to nothing to abort.
    assertThat(conflicts.bruteForceAborts()).as("local transactions aborted by replicated writes, with lanes")
      .isLessThanOrEqualTo(5);
  }

  @Test
  @DisplayName("control: three replicas writing one shared slot row on three Galera nodes count exactly, through certification conflicts")
  void controlOnOneSlot() throws InterruptedException {
    run("control: no lanes, 1 slot", "galera_control", false, 1);
  }

  /** Over the three nodes: commits that failed certification, local transactions aborted by a replicated write. */
  private record Conflicts(long certificationFailures, long bruteForceAborts) {
  }

  private Conflicts run(String label, String table, boolean lanes, int slots) throws InterruptedException {
    List<GatewayFixture> replicas = new ArrayList<>();
    try {
      // lanes are leased when a gateway starts: the control's replicas start with the measurement's switch off
      System.setProperty(Knobs.LANES_ENABLED, String.valueOf(lanes));
      try {
        for (int node = 1; node <= 3; node++) {
          JsonObject database = new JsonObject().put("kind", "mysql").put("host", "127.0.0.1").put("port", basePort + node)
            .put("name", "counters").put("user", "counters").put("password", "");
          JsonObject config = GatewayFixture.baseConfig(database, table);
          config.getJsonObject("namespaces").getJsonObject("downloads").put("slots", slots);
          replicas.add(GatewayFixture.start(config));
        }
      } finally {
        System.clearProperty(Knobs.LANES_ENABLED);
      }
      long[] certBefore = status(replicas, "wsrep_local_cert_failures");
      long[] abortsBefore = status(replicas, "wsrep_local_bf_aborts");
      AtomicLong sent = new AtomicLong();
      AtomicLong ok = new AtomicLong();
      AtomicLong other = new AtomicLong();
      long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(LOAD_MILLIS);
      List<Future<Void>> loops = new ArrayList<>();
      for (GatewayFixture replica : replicas) {
        for (int i = 0; i < SENDERS_PER_REPLICA; i++) {
          io.vertx.core.Promise<Void> done = io.vertx.core.Promise.promise();
          loops.add(done.future());
          replica.vertx.runOnContext(v -> send(replica, end, sent, ok, other, done));
        }
      }
      await(Future.all(loops));
      long[] cert = delta(certBefore, status(replicas, "wsrep_local_cert_failures"));
      long[] aborts = delta(abortsBefore, status(replicas, "wsrep_local_bf_aborts"));
      // before the SUMs, so that a run whose SUM fails still shows its answers
      System.out.printf("%s: sent %,d, 200 %,d, other %,d%n", label, sent.get(), ok.get(), other.get());
      List<Long> sums = new ArrayList<>();
      for (GatewayFixture replica : replicas) {
        sums.add(committedSum(replica, table));
      }
      long retries = 0;
      for (GatewayFixture replica : replicas) {
        retries += await(replica.http.get("/metrics").send()).bodyAsString().lines()
          .filter(line -> line.startsWith("gateway_flush_retries"))
          .mapToLong(line -> (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1))).sum();
      }
      Conflicts conflicts = new Conflicts(cert[0] + cert[1] + cert[2], aborts[0] + aborts[1] + aborts[2]);
      results.add(String.format("| %s | %,d | %,d | %,d | %,d / %,d / %,d | %d | %d | %d |", label, sent.get(), ok.get(),
        other.get(), sums.get(0), sums.get(1), sums.get(2), conflicts.certificationFailures(), conflicts.bruteForceAborts(),
        retries));
      assertThat(ok.get()).isPositive();
      assertThat(sums).as("the SUM on every node").allSatisfy(sum ->
        assertThat(sum).isBetween(ok.get(), ok.get() + other.get()));
      assertThat(sums).as("every node agrees").containsOnly(sums.get(0));
      return conflicts;
    } finally {
      replicas.forEach(GatewayFixture::close);
    }
  }

  /**
   * The SUM on the replica's node once it has applied every write committed before (wsrep_sync_wait). On a starved
   * machine that wait may fail (1205) before the node caught up; it is asked again for up to {@link #SUM_PATIENCE},
   * which a cluster that stopped applying does not pass.
   */
  private static long committedSum(GatewayFixture replica, String table) throws InterruptedException {
    long deadline = System.nanoTime() + SUM_PATIENCE.toNanos();
    while (true) {
      try {
        return await(replica.sql().withConnection(connection -> connection.query("SET SESSION wsrep_sync_wait = 1").execute()
          .compose(set -> connection.query("SELECT COALESCE(SUM(count), 0) FROM " + table).execute())
          .map(rows -> rows.iterator().next().getNumeric(0).longValue())));
      } catch (IllegalStateException failed) {
        if (System.nanoTime() > deadline) {
          throw failed;
        }
        System.out.println("SUM not answered yet, asking again: " + failed.getMessage());
        Thread.sleep(1_000);
      }
    }
  }

  private static void send(GatewayFixture replica, long end, AtomicLong sent, AtomicLong ok, AtomicLong other,
                           io.vertx.core.Promise<Void> done) {
    if (System.nanoTime() >= end) {
      done.complete();
      return;
    }
    sent.incrementAndGet();
    replica.http.post("/v1/counters/downloads/hot/increments").send().onComplete(response -> {
      if (response.succeeded() && response.result().statusCode() == 200) {
        ok.incrementAndGet();
      } else {
        other.incrementAndGet();
      }
      send(replica, end, sent, ok, other, done);
    });
  }

  private static long[] status(List<GatewayFixture> replicas, String variable) {
    long[] values = new long[replicas.size()];
    for (int i = 0; i < replicas.size(); i++) {
      Row row = await(replicas.get(i).sql().query("SHOW GLOBAL STATUS LIKE '" + variable + "'").execute()).iterator().next();
      values[i] = Long.parseLong(row.getString(1));
    }
    return values;
  }

  private static long[] delta(long[] before, long[] after) {
    long[] delta = new long[before.length];
    for (int i = 0; i < before.length; i++) {
      delta[i] = after[i] - before[i];
    }
    return delta;
  }

  private static boolean onPath(String command) {
    return java.util.Arrays.stream(System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator))
      .anyMatch(dir -> !dir.isEmpty() && Files.isExecutable(Paths.get(dir, command)));
  }

  /**
   * The first base, from the script's 3310 up, whose twelve ports are free on loopback: the machine's own MariaDB
   * (3306) and other tests' servers, which take ports of the ephemeral range, never collide with the nodes.
   */
  private static int freeBasePort() {
    for (int base = 3310; base < 32_000; base += 100) {
      if (allFree(base)) {
        return base;
      }
    }
    throw new IllegalStateException("no free range of ports for the Galera nodes between 3310 and 32000");
  }

  private static boolean allFree(int base) {
    for (int offset : PORT_OFFSETS) {
      try (ServerSocket socket = new ServerSocket(base + offset, 1, InetAddress.getLoopbackAddress())) {
        socket.setReuseAddress(false);
      } catch (IOException taken) {
        return false;
      }
    }
    return true;
  }

  private int script(String action) throws IOException, InterruptedException {
    ProcessBuilder builder = new ProcessBuilder("bash", SCRIPT.toString(), action, DIR.toString());
    builder.environment().put("GALERA_BASE_PORT", Integer.toString(basePort));
    Process process = builder
      .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(Paths.get("target/galera-script.log").toFile()))
      .start();
    if (!process.waitFor(180, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      return -1;
    }
    return process.exitValue();
  }

  private static void deleteRecursively(Path dir) throws IOException {
    if (Files.exists(dir)) {
      try (var paths = Files.walk(dir)) {
        paths.sorted(java.util.Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
      }
    }
  }
}
