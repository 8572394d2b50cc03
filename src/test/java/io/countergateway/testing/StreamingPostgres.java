package io.countergateway.testing;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A PostgreSQL primary and a streaming standby made from it ({@code pg_basebackup -R}), both of the machine's binaries
 * ({@link PostgresOnHost#binaries()}) on loopback ports of their own, run as the {@code postgres} user with data under
 * one temporary directory that {@link #close()} deletes. The standby is {@value #STANDBY_NAME}; the primary names it in
 * {@code synchronous_standby_names} when asked for a synchronous one. The standby starts with no synchronous standby
 * of its own, so that once promoted it commits alone, as a failover manager reconfigures a promoted server.
 */
public final class StreamingPostgres implements AutoCloseable {
  public static final String STANDBY_NAME = "standby1";
  private static final String USER = "postgres";

  private final Path bin;
  private final Path home;
  public final int primaryPort;
  public final int standbyPort;
  /** The WAL receiver {@link #stallStandby()} stopped. */
  private String standbyReceiverPid;

  private StreamingPostgres(Path bin, Path home, int primaryPort, int standbyPort) {
    this.bin = bin;
    this.home = home;
    this.primaryPort = primaryPort;
    this.standbyPort = standbyPort;
  }

  /**
   * initdb, the primary with database {@code database} (and {@code primarySettings}, postgresql.conf lines), the
   * standby from its base backup; returns once the standby streams (and, when {@code synchronous}, is
   * {@code sync} in {@code pg_stat_replication}).
   */
  public static StreamingPostgres start(String database, boolean synchronous, List<String> primarySettings) {
    Path bin = PostgresOnHost.binaries();
    if (bin == null) {
      throw new IllegalStateException("no PostgreSQL server under /usr/lib/postgresql");
    }
    try {
      Path home = Files.createTempDirectory("cg-streaming-");
      Files.setOwner(home, home.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName(USER));
      StreamingPostgres pair = new StreamingPostgres(bin, home, FreePorts.take(), FreePorts.take());
      try {
        pair.make(database, synchronous, primarySettings);
      } catch (RuntimeException | IOException e) {
        pair.close();
        throw e;
      }
      return pair;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** initdb, the primary, its database, the standby from its base backup, until it streams. */
  private void make(String database, boolean synchronous, List<String> primarySettings) throws IOException {
    run(Duration.ofSeconds(60), "initdb", "-D", data("primary"), "-U", USER, "-A", "trust", "-E", "UTF8",
      "--no-sync");
    List<String> settings = new ArrayList<>(List.of("listen_addresses = '127.0.0.1'",
      "unix_socket_directories = '" + home + "'", "fsync = off", "max_connections = 200", "wal_level = replica"));
    settings.addAll(primarySettings);
    Files.write(Path.of(data("primary"), "postgresql.conf"), settings, StandardOpenOption.APPEND);
    startServer("primary", primaryPort);
    psql(primaryPort, "CREATE DATABASE " + database);
    run(Duration.ofSeconds(60), "pg_basebackup", "-h", "127.0.0.1", "-p", Integer.toString(primaryPort),
      "-U", USER, "-D", data("standby"), "-R", "--no-sync", "--checkpoint=fast");
    // the standby names itself to the primary, and commits alone once promoted
    Files.write(Path.of(data("standby"), "postgresql.auto.conf"), List.of(
      "primary_conninfo = 'host=127.0.0.1 port=" + primaryPort + " user=" + USER + " application_name="
        + STANDBY_NAME + "'", "synchronous_standby_names = ''"), StandardOpenOption.APPEND);
    startServer("standby", standbyPort);
    if (synchronous) {
      // only now: commits before the standby streamed would wait for it
      psql(primaryPort, "ALTER SYSTEM SET synchronous_standby_names = '" + STANDBY_NAME + "'");
      psql(primaryPort, "SELECT pg_reload_conf()");
    }
    awaitStreaming(synchronous ? "sync" : "async", Duration.ofSeconds(30));
  }

  /** The gateway's {@code database} section: both servers in {@code database.hosts}, the primary first. */
  public JsonObject config(String database) {
    return new JsonObject().put("kind", "postgres")
      .put("hosts", new JsonArray().add("127.0.0.1:" + primaryPort).add("127.0.0.1:" + standbyPort))
      .put("name", database).put("user", USER).put("password", "");
  }

  /** {@code pg_ctl stop -m immediate}: the primary's processes end at once, as a crash ends them. */
  public void crashPrimary() {
    run(Duration.ofSeconds(30), "pg_ctl", "stop", "-D", data("primary"), "-m", "immediate");
  }

  /**
   * {@code pg_ctl promote}, waiting until the standby takes writes: up to pg_ctl's own 60 s, and a margin past it, as a
   * machine loaded by other builds can take tens of seconds to end a standby's recovery.
   */
  public void promoteStandby() {
    run(Duration.ofSeconds(90), "pg_ctl", "promote", "-w", "-D", data("standby"));
  }

  /** SIGSTOP to the standby's WAL receiver: the link stalls, the primary goes on committing without it. */
  public void stallStandby() {
    standbyReceiverPid = psql(standbyPort, "SELECT pid FROM pg_stat_wal_receiver");
    if (standbyReceiverPid.isEmpty()) {
      throw new IllegalStateException("the standby has no WAL receiver: " + log("standby"));
    }
    signal("-STOP", standbyReceiverPid);
  }

  /**
   * SIGKILL to the stalled WAL receiver: what the primary sent in the stall, still in the socket's buffers, is never
   * read (the standby restarts its recovery from the WAL it has), as when the link stalled until the primary died.
   */
  public void cutStalledLink() {
    signal("-KILL", standbyReceiverPid);
  }

  private static void signal(String signal, String pid) {
    try {
      Process kill = new ProcessBuilder("kill", signal, pid).redirectErrorStream(true).start();
      if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
        throw new IllegalStateException("kill " + signal + " " + pid + " failed");
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** One query's first column through psql, on the server at {@code port}. */
  public String psql(int port, String sql) {
    return run(Duration.ofSeconds(30), "psql", "-h", "127.0.0.1", "-p", Integer.toString(port), "-U", USER, "-d",
      "postgres", "-XAtc", sql).trim();
  }

  private String data(String server) {
    return home.resolve(server).toString();
  }

  private void startServer(String server, int port) {
    run(Duration.ofSeconds(60), "pg_ctl", "start", "-w", "-D", data(server), "-l", home.resolve(server + ".log").toString(),
      "-o", "-p " + port);
  }

  private void awaitStreaming(String syncState, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (psql(primaryPort, "SELECT count(*) FROM pg_stat_replication WHERE application_name = '" + STANDBY_NAME
        + "' AND state = 'streaming' AND sync_state = '" + syncState + "'").equals("1")) {
        return;
      }
      GatewayProcess.sleep(100);
    }
    throw new IllegalStateException("the standby did not stream (" + syncState + ") within " + timeout + ": "
      + log("standby"));
  }

  public String log(String server) {
    try {
      List<String> lines = Files.readAllLines(home.resolve(server + ".log"));
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

  /** Runs one of the server's programs as the {@code postgres} user; its output, or a failure naming it. */
  private String run(Duration timeout, String program, String... arguments) {
    List<String> command = new ArrayList<>(List.of("setpriv", "--reuid=" + USER, "--regid=" + USER, "--init-groups",
      bin.resolve(program).toString()));
    command.addAll(List.of(arguments));
    try {
      // pg_ctl start leaves the server holding the pipe: read only what the program wrote until it exits
      Path output = Files.createTempFile("cg-streaming-out-", ".txt");
      try {
        Process process = new ProcessBuilder(command).directory(home.toFile()).redirectErrorStream(true)
          .redirectOutput(output.toFile()).start();
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
          process.destroyForcibly();
          throw new IllegalStateException(program + " did not end within " + timeout);
        }
        String text = Files.readString(output, StandardCharsets.UTF_8);
        if (process.exitValue() != 0) {
          throw new IllegalStateException(String.join(" ", command) + " failed: " + text);
        }
        return text;
      } finally {
        Files.deleteIfExists(output);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** Both servers stopped (immediate: their data is deleted), then the directory. */
  @Override
  public void close() {
    for (String server : List.of("primary", "standby")) {
      try {
        run(Duration.ofSeconds(30), "pg_ctl", "stop", "-D", data(server), "-m", "immediate");
      } catch (IllegalStateException stoppedAlready) {
        // the crashed primary
      }
    }
    try (Stream<Path> files = Files.walk(home)) {
      files.sorted(Comparator.reverseOrder()).forEach(file -> file.toFile().delete());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
