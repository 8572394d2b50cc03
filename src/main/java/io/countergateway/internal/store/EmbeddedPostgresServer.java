package io.countergateway.internal.store;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
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
 * <p>It is not open to every local user: a random password is made at the first start and kept in
 * {@code <dataDir>/gateway-password} (owner-only), and {@code pg_hba.conf} asks for it (SCRAM) on the
 * local socket and on loopback alike. A data directory of an older version, which trusted every local
 * connection, gets a password and the same {@code pg_hba.conf} when it starts.
 *
 * <p>{@link #start} blocks (it may unpack binaries, run {@code initdb} and wait for the server), so
 * call it off the event loop.
 */
public final class EmbeddedPostgresServer implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(EmbeddedPostgresServer.class);
  private static final String USER = "postgres";
  private static final Duration STARTUP_WAIT = Duration.ofSeconds(60);
  private static final Duration ORPHAN_STOP_WAIT = Duration.ofSeconds(30);
  /** In the data directory; PostgreSQL ignores files it does not know there. */
  public static final String PASSWORD_FILE = "gateway-password";
  /** In the data directory: zonky holds a lock on it while its JVM runs the server there. */
  public static final String LOCK_FILE = "epg-lock";
  /** How zonky's start begins its message when another process holds {@link #LOCK_FILE}. */
  public static final String LOCKED_BY_ANOTHER = "could not lock";
  private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rw-------");
  private static final String PASSWORD_CHARACTERS =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  /**
   * Every connection, socket or loopback, ordinary or replication, proves the password; initdb's own
   * file trusts every local user, who could then run {@code COPY ... TO PROGRAM} as the superuser.
   */
  static final String PG_HBA =
      """
      # Written by counter-gateway at every start of its embedded PostgreSQL: the password in
      # gateway-password (SCRAM), for every connection. Changes made here are overwritten.
      local   all           all                     scram-sha-256
      host    all           all     127.0.0.1/32    scram-sha-256
      host    all           all     ::1/128         scram-sha-256
      local   replication   all                     scram-sha-256
      host    replication   all     127.0.0.1/32    scram-sha-256
      host    replication   all     ::1/128         scram-sha-256
      """;

  private final EmbeddedPostgres postgres;
  private final String databaseName;
  private final String password;
  private final AtomicBoolean closed = new AtomicBoolean();

  private EmbeddedPostgresServer(EmbeddedPostgres postgres, String databaseName, String password) {
    this.postgres = postgres;
    this.databaseName = databaseName;
    this.password = password;
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
    Path pending = pendingPasswordFile(dir);
    EmbeddedPostgres postgres;
    String password;
    boolean fresh;
    try {
      Files.createDirectories(dir);
      stopOrphanedPostmaster(dir);
      fresh = !Files.exists(dir.resolve("PG_VERSION"));
      EmbeddedPostgres.Builder builder =
          EmbeddedPostgres.builder()
              .setDataDirectory(dir)
              .setCleanDataDirectory(false)
              .setPort(port)
              .setLocaleConfig("locale", "C")
              // zonky defaults to fsync off (-F) and synchronous_commit off, made for throwaway
              // test databases; these counters must survive a crash of the machine.
              .setServerConfig("fsync", "on")
              .setServerConfig("synchronous_commit", "on")
              .setServerConfig("password_encryption", "scram-sha-256")
              .setPGStartupWait(STARTUP_WAIT);
      if (fresh) {
        // initdb wants an empty directory: the password waits beside it until the server runs,
        // and initdb sets it and writes a pg_hba.conf asking for it (its later options win over
        // zonky's own "-A trust"), so the new server never trusts anyone
        password = readOrCreatePassword(pending);
        builder.setLocaleConfig("auth", "scram-sha-256").setLocaleConfig("pwfile", pending.toString());
      } else {
        if (Files.exists(pending) && !Files.exists(dir.resolve(PASSWORD_FILE))) {
          Files.move(pending, dir.resolve(PASSWORD_FILE), StandardCopyOption.ATOMIC_MOVE);
        }
        password = readOrCreatePassword(dir.resolve(PASSWORD_FILE));
      }
      // zonky's own readiness check and connections log in with it
      postgres = builder.setConnectConfig("password", password).start();
      if (fresh) {
        Files.move(pending, dir.resolve(PASSWORD_FILE), StandardCopyOption.ATOMIC_MOVE);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("could not start embedded PostgreSQL in " + dir, e);
    }
    EmbeddedPostgresServer server = new EmbeddedPostgresServer(postgres, databaseName, password);
    try {
      server.requirePassword(dir, fresh);
      server.createDatabaseIfMissing();
    } catch (SQLException | IOException | RuntimeException e) {
      server.close();
      throw new IllegalStateException("could not require the password or create database '"
          + databaseName + "' in embedded PostgreSQL", e);
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

  /** The superuser's password, as kept in {@code <dataDir>/gateway-password}. */
  public String password() {
    return password;
  }

  /**
   * Makes sure the server asks every connection for the password: a data directory of an older
   * version trusted every local user. The password is set first (while such a file still lets us in
   * without it), then {@code pg_hba.conf} is written and the server reloads it.
   */
  private void requirePassword(Path dataDirectory, boolean fresh) throws SQLException, IOException {
    Path hba = dataDirectory.resolve("pg_hba.conf");
    if (Files.exists(hba) && Files.readString(hba, StandardCharsets.UTF_8).equals(PG_HBA)) {
      return;
    }
    try (Connection connection = postgres.getPostgresDatabase().getConnection();
        Statement statement = connection.createStatement()) {
      statement.execute("SET password_encryption = 'scram-sha-256'");
      // ALTER ROLE takes no parameters; the literal is quoted the SQL way
      statement.execute("ALTER ROLE " + USER + " PASSWORD '" + password.replace("'", "''") + "'");
      Files.writeString(hba, PG_HBA, StandardCharsets.UTF_8);
      statement.execute("SELECT pg_reload_conf()");
    }
    if (!fresh) {
      LOG.atInfo()
          .addKeyValue("event", "embedded_database_password_set")
          .log("Embedded PostgreSQL trusted local connections; it now asks every one for the password"
              + " kept in {}", dataDirectory.resolve(PASSWORD_FILE));
    }
  }

  /** Where a new data directory's password waits while initdb needs the directory empty. */
  private static Path pendingPasswordFile(Path dataDirectory) {
    return dataDirectory.resolveSibling(dataDirectory.getFileName() + "." + PASSWORD_FILE);
  }

  /** The password in {@code file}, made (random, owner-only) when the file does not exist yet. */
  private static String readOrCreatePassword(Path file) throws IOException {
    if (Files.exists(file)) {
      if (!Files.getPosixFilePermissions(file).equals(OWNER_ONLY)) {
        LOG.warn("{} was readable by others; it is owner-only again", file);
        Files.setPosixFilePermissions(file, OWNER_ONLY);
      }
      String kept = Files.readString(file, StandardCharsets.UTF_8).strip();
      if (kept.isEmpty()) {
        throw new IllegalStateException(file + " is empty: put the embedded PostgreSQL's password back");
      }
      return kept;
    }
    SecureRandom random = new SecureRandom();
    StringBuilder password = new StringBuilder();
    for (int i = 0; i < 32; i++) {
      password.append(PASSWORD_CHARACTERS.charAt(random.nextInt(PASSWORD_CHARACTERS.length())));
    }
    // created owner-only, never readable by others even for a moment
    Path temporary = file.resolveSibling(file.getFileName() + ".new");
    Files.deleteIfExists(temporary);
    Files.createFile(temporary, PosixFilePermissions.asFileAttribute(OWNER_ONLY));
    Files.writeString(temporary, password + "\n", StandardCharsets.UTF_8);
    Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE);
    return password.toString();
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

  /**
   * Whether a live process (another gateway, or this JVM) runs an embedded PostgreSQL on {@code dataDirectory}: a
   * second one there would fail on zonky's lock. Blocking.
   */
  public static boolean inUse(Path dataDirectory) {
    try {
      return lockedByLiveOwner(dataDirectory.toAbsolutePath().normalize());
    } catch (IOException e) {
      return false; // not readable as a lock: the start itself will say what is wrong with the directory
    }
  }

  /** Zonky holds a lock on this file while its JVM runs the server. */
  private static boolean lockedByLiveOwner(Path dataDirectory) throws IOException {
    Path lockFile = dataDirectory.resolve(LOCK_FILE);
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
