package io.countergateway.store;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A PostgreSQL server that the gateway starts for itself, so that it works out of the box with no
 * database to install or configure, yet keeps its counters across restarts by storing them in a
 * directory the operator chooses.
 *
 * <p>It is a convenience for a single instance (trying it out, a demo, a small deployment); a real
 * deployment points the gateway at a PostgreSQL or MySQL server of its own instead.
 *
 * <p>{@link #start} blocks (it may unpack binaries, run {@code initdb} and wait for the server), so
 * call it off the event loop.
 */
public final class EmbeddedPostgresServer implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(EmbeddedPostgresServer.class);
  private static final String USER = "postgres";
  private static final Duration STARTUP_WAIT = Duration.ofSeconds(60);
  private static final Duration ORPHAN_STOP_WAIT = Duration.ofSeconds(30);

  private final EmbeddedPostgres postgres;
  private final String databaseName;
  private final AtomicBoolean closed = new AtomicBoolean();

  private EmbeddedPostgresServer(EmbeddedPostgres postgres, String databaseName) {
    this.postgres = postgres;
    this.databaseName = databaseName;
  }

  /**
   * Starts PostgreSQL on {@code dataDirectory} (created and initialised if needed, reused as it is
   * otherwise) and creates {@code databaseName} if it does not exist yet. Blocking.
   *
   * @param dataDirectory where the server keeps its data; never cleaned
   * @param port the TCP port to listen on (on localhost), or 0 for a free one
   * @param databaseName the database the gateway uses
   */
  public static EmbeddedPostgresServer start(Path dataDirectory, int port, String databaseName) {
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException("port must be between 0 and 65535: " + port);
    }
    if (databaseName == null || databaseName.isBlank()) {
      throw new IllegalArgumentException("databaseName must not be blank");
    }
    Path dir = dataDirectory.toAbsolutePath().normalize();
    EmbeddedPostgres postgres;
    try {
      Files.createDirectories(dir);
      stopOrphanedPostmaster(dir);
      postgres =
          EmbeddedPostgres.builder()
              .setDataDirectory(dir)
              .setCleanDataDirectory(false)
              .setPort(port)
              .setLocaleConfig("locale", "C")
              // zonky defaults to fsync off (-F) and synchronous_commit off, made for throwaway
              // test databases; these counters must survive a crash of the machine.
              .setServerConfig("fsync", "on")
              .setServerConfig("synchronous_commit", "on")
              .setPGStartupWait(STARTUP_WAIT)
              .start();
    } catch (IOException e) {
      throw new UncheckedIOException("could not start embedded PostgreSQL in " + dir, e);
    }
    EmbeddedPostgresServer server = new EmbeddedPostgresServer(postgres, databaseName);
    try {
      server.createDatabaseIfMissing();
    } catch (SQLException | RuntimeException e) {
      server.close();
      throw new IllegalStateException(
          "could not create database '" + databaseName + "' in embedded PostgreSQL", e);
    }
    LOG.info(
        "Embedded PostgreSQL listening on localhost:{}, database '{}', data in {}",
        postgres.getPort(), databaseName, dir);
    return server;
  }

  public int port() {
    return postgres.getPort();
  }

  public String databaseName() {
    return databaseName;
  }

  public String user() {
    return USER;
  }

  /** Stops the server (a fast shutdown: open sessions are ended). Does nothing the second time. */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    try {
      postgres.close();
    } catch (IOException e) {
      LOG.warn("Could not stop embedded PostgreSQL cleanly", e);
    }
  }

  private void createDatabaseIfMissing() throws SQLException {
    try (Connection connection = postgres.getPostgresDatabase().getConnection()) {
      try (PreparedStatement exists =
          connection.prepareStatement("SELECT 1 FROM pg_database WHERE datname = ?")) {
        exists.setString(1, databaseName);
        try (ResultSet rows = exists.executeQuery()) {
          if (rows.next()) {
            return;
          }
        }
      }
      try (Statement create = connection.createStatement()) {
        create.execute("CREATE DATABASE \"" + databaseName.replace("\"", "\"\"") + "\"");
      }
    }
  }

  /**
   * A postmaster left running by a process that died without stopping it (kill -9, a crash) would
   * keep the data directory locked and the next start would fail; stop it first.
   */
  private static void stopOrphanedPostmaster(Path dataDirectory) throws IOException {
    Path pidFile = dataDirectory.resolve("postmaster.pid");
    if (!Files.isRegularFile(pidFile)) {
      return;
    }
    List<String> lines = Files.readAllLines(pidFile, StandardCharsets.US_ASCII);
    long pid;
    try {
      pid = lines.isEmpty() ? -1 : Long.parseLong(lines.get(0).trim());
    } catch (NumberFormatException e) {
      return;
    }
    Optional<ProcessHandle> process = pid > 0 ? ProcessHandle.of(pid) : Optional.empty();
    boolean isPostgres =
        process
            .flatMap(p -> p.info().command())
            .map(command -> command.endsWith("/postgres"))
            .orElse(false);
    if (!isPostgres) {
      return; // a stale file: postgres itself copes with it
    }
    if (lockedByLiveOwner(dataDirectory)) {
      return; // another live process runs this server: leave it alone, start will fail clearly
    }
    ProcessHandle postmaster = process.get();
    LOG.warn("Stopping orphaned PostgreSQL (pid {}) still running on {}", pid, dataDirectory);
    postmaster.destroy(); // SIGTERM: a smart shutdown; its clients died with their process
    try {
      postmaster.onExit().get(ORPHAN_STOP_WAIT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      // Not SIGKILL: a killed postmaster leaves its backends behind, holding the data directory.
      throw new IllegalStateException(
          "orphaned PostgreSQL (pid " + pid + ") on " + dataDirectory + " did not stop within "
              + ORPHAN_STOP_WAIT + "; stop it and start again", e);
    }
  }

  /** Zonky holds a lock on this file while its JVM runs the server. */
  private static boolean lockedByLiveOwner(Path dataDirectory) throws IOException {
    Path lockFile = dataDirectory.resolve("epg-lock");
    if (!Files.exists(lockFile)) {
      return false;
    }
    try (FileChannel channel = FileChannel.open(lockFile, StandardOpenOption.WRITE);
        FileLock lock = channel.tryLock()) {
      return lock == null;
    } catch (OverlappingFileLockException e) {
      return true; // held by this JVM
    }
  }
}
