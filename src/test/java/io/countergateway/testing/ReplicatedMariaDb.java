package io.countergateway.testing;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A MariaDB primary and a replica that follows it by binlog replication with GTIDs ({@code CHANGE MASTER TO …
 * MASTER_USE_GTID = slave_pos}), both the machine's {@code mariadbd} ({@link MariaDbServer}) on loopback ports of their
 * own, their data under one temporary directory that {@link #close()} deletes. The replica runs with {@code read_only},
 * as replicas are marked; with {@code semiSynchronous}, the primary's commits wait for the replica's receipt
 * ({@code rpl_semi_sync_master_enabled}, wait point {@code AFTER_SYNC}). The gateway's user {@value #WRITER} has every
 * right on the database, and {@code PROCESS} to see the replica, but none that writes through {@code read_only}
 * ({@code READ_ONLY ADMIN}, {@code SUPER}), as an operator gives it. Blocking throughout: never on an event loop.
 */
public final class ReplicatedMariaDb implements AutoCloseable {
  public static final String WRITER = "gateway_writer";
  private static final Duration WAIT = Duration.ofSeconds(30);
  /** What the replica's SQL thread says once it has applied every event it received. */
  private static final String APPLIED_ALL = "read all relay log";

  private final Path home;
  private final Path client;
  private final MariaDbServer primary;
  private final MariaDbServer replica;
  /** Stops both servers if the JVM ends before {@link #close()} (a Failsafe timeout). */
  private final Thread stopOnExit;

  private ReplicatedMariaDb(Path home, boolean semiSynchronous) {
    this.home = home;
    this.client = MariaDbServer.locate("mariadb", MariaDbServer.searchPath());
    List<String> both = List.of("--log-bin=mariadb-bin", "--binlog-format=ROW", "--log-slave-updates",
      "--gtid-strict-mode=ON", "--log-bin-trust-function-creators=ON", "--rpl-semi-sync-slave-enabled=ON");
    List<String> primaryArguments = new ArrayList<>(both);
    primaryArguments.add("--server-id=1");
    if (semiSynchronous) {
      // far above any commit's wait on a busy machine: the test proves the semi-synchronous case, never a fallback
      primaryArguments.addAll(List.of("--rpl-semi-sync-master-enabled=ON", "--rpl-semi-sync-master-timeout=60000",
        "--rpl-semi-sync-master-wait-point=AFTER_SYNC"));
    }
    List<String> replicaArguments = new ArrayList<>(both);
    replicaArguments.addAll(List.of("--server-id=2", "--read-only=ON"));
    this.primary = MariaDbServer.install(home.resolve("primary"), primaryArguments);
    this.replica = MariaDbServer.install(home.resolve("replica"), replicaArguments);
    this.stopOnExit = new Thread(this::stopBoth, "replicated-mariadb-stop");
  }

  /**
   * Both servers, database {@code database} and the gateway's user made on the primary and replicated; returns once
   * the replica has applied them (and, when {@code semiSynchronous}, acknowledges the primary's commits).
   */
  public static ReplicatedMariaDb start(String database, boolean semiSynchronous) {
    Path home;
    try {
      home = Files.createTempDirectory("cg-mariadb-repl-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    ReplicatedMariaDb pair = new ReplicatedMariaDb(home, semiSynchronous);
    Runtime.getRuntime().addShutdownHook(pair.stopOnExit);
    try {
      pair.make(database, semiSynchronous);
    } catch (RuntimeException e) {
      pair.close();
      throw e;
    }
    return pair;
  }

  private void make(String database, boolean semiSynchronous) {
    primary.start();
    replica.start();
    sql(replica.port(), "CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = " + primary.port()
      + ", MASTER_USER = 'root', MASTER_PASSWORD = '', MASTER_CONNECT_RETRY = 1, MASTER_USE_GTID = slave_pos");
    sql(replica.port(), "START SLAVE");
    String user = "'" + WRITER + "'@'%'";
    sql(primary.port(), "CREATE DATABASE " + database + "; CREATE USER " + user + " IDENTIFIED BY '" + WRITER + "'; "
      + "GRANT ALL PRIVILEGES ON " + database + ".* TO " + user + "; GRANT PROCESS ON *.* TO " + user);
    if (semiSynchronous) {
      await("the replica acknowledges as a semi-synchronous one", () -> sql(primary.port(),
        "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS "
          + "WHERE VARIABLE_NAME = 'RPL_SEMI_SYNC_MASTER_CLIENTS'").equals("1"));
    }
    awaitReplicaCaughtUp();
  }

  /** The gateway's {@code database} section: both servers in {@code database.hosts}, the primary first. */
  public JsonObject config(String database) {
    return new JsonObject().put("kind", "mysql")
      .put("hosts", new JsonArray().add("127.0.0.1:" + primary.port()).add("127.0.0.1:" + replica.port()))
      .put("name", database).put("user", WRITER).put("password", WRITER);
  }

  public int primaryPort() {
    return primary.port();
  }

  public int replicaPort() {
    return replica.port();
  }

  /** SIGKILL to the primary: it ends at once, as a crash ends it. */
  public void crashPrimary() {
    primary.crash();
  }

  /**
   * The replica stops taking events from the primary ({@code STOP SLAVE IO_THREAD}), as when the link between them is
   * cut: an asynchronous primary goes on answering its commits, a semi-synchronous one waits for a receipt that does
   * not come (up to its timeout).
   */
  public void cutLink() {
    sql(replica.port(), "STOP SLAVE IO_THREAD");
  }

  /**
   * A switchover's first half: the primary set {@code read_only}, so that no session of a user without
   * {@code READ_ONLY ADMIN} writes there, then the replica allowed to apply all it has.
   */
  public void demotePrimary() {
    sql(primary.port(), "SET GLOBAL read_only = ON");
    awaitReplicaCaughtUp();
  }

  /**
   * What a failover manager does to the replica: no more events taken from the primary, every event received applied,
   * replication ended, {@code read_only} off. Works whether the primary lives or not.
   */
  public void promoteReplica() {
    sql(replica.port(), "STOP SLAVE IO_THREAD");
    await("the replica applies every event it received", () -> slaveStatus().contains(APPLIED_ALL));
    sql(replica.port(), "STOP SLAVE; RESET SLAVE ALL; SET GLOBAL read_only = OFF");
  }

  /** The primary stopped as a service stop does, then started again with {@code innodb_read_only}, no read_only. */
  public void restartPrimaryInnoDbReadOnly() {
    primary.stop();
    primary.start(List.of("--innodb-read-only=ON", "--read-only=OFF"));
  }

  /** SUM(count) per record_id of {@code table} for the ids of {@code type} starting with {@code prefix}. */
  public Map<String, Long> sums(int port, String database, String table, String type, String prefix) {
    Map<String, Long> sums = new HashMap<>();
    String rows = sql(port, "SELECT record_id, SUM(count) FROM " + database + "." + table + " WHERE record_type = '"
      + type + "' AND record_id LIKE '" + prefix + "%' GROUP BY record_id");
    for (String line : rows.split("\n")) {
      if (!line.isBlank()) {
        String[] columns = line.split("\t");
        sums.put(columns[0], Long.parseLong(columns[1].trim()));
      }
    }
    return sums;
  }

  /** The state of the replica's applier (the SQL thread), empty when it does not run. */
  private String slaveStatus() {
    return sql(replica.port(), "SELECT STATE FROM information_schema.PROCESSLIST WHERE COMMAND = 'Slave_SQL'");
  }

  /** Until the replica has applied every transaction the primary has logged. */
  private void awaitReplicaCaughtUp() {
    String position = sql(primary.port(), "SELECT @@global.gtid_binlog_pos");
    String waited = sql(replica.port(), "SELECT MASTER_GTID_WAIT('" + position + "', " + WAIT.toSeconds() + ")");
    if (!waited.equals("0")) {
      throw new IllegalStateException("the replica did not apply " + position + " within " + WAIT + ": "
        + slaveStatus() + "; its log: " + replica.log());
    }
  }

  private static void await(String what, java.util.function.BooleanSupplier condition) {
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(what + ": not within " + WAIT);
      }
      GatewayProcess.sleep(50);
    }
  }

  /** Statements through the {@code mariadb} client as root over TCP; the answer's rows, tab-separated. */
  public String sql(int port, String statements) {
    List<String> command = new ArrayList<>(List.of(client.toString(), "--no-defaults", "--protocol=TCP",
      "-h", "127.0.0.1", "-P", Integer.toString(port), "-u", "root", "-N", "-B"));
    command.addAll(List.of("-e", statements));
    try {
      Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
      // a statement still running after the wait is ended, and its output with it
      CompletableFuture<Process> ended = process.onExit().orTimeout(WAIT.toSeconds(), TimeUnit.SECONDS)
        .whenComplete((exited, late) -> {
          if (late != null) {
            process.destroyForcibly(); // never on an ended process: it would close the output before it is read
          }
        });
      String answer = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
      if (process.waitFor() != 0 || ended.isCompletedExceptionally()) {
        throw new IllegalStateException("on 127.0.0.1:" + port + ", " + statements + " failed (or ran past " + WAIT
          + "): " + answer);
      }
      return answer;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private void stopBoth() {
    primary.crash();
    replica.crash();
  }

  /** Both servers killed (their data is deleted), then the directory. */
  @Override
  public void close() {
    stopBoth();
    primary.remove();
    replica.remove();
    TestDatabases.deleteRecursively(home);
    try {
      Runtime.getRuntime().removeShutdownHook(stopOnExit);
    } catch (IllegalStateException exiting) {
      // the JVM is shutting down: the hook runs anyway
    }
  }
}
