package io.countergateway.testing;

import io.countergateway.internal.store.EmbeddedPostgresServer;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.mysqlclient.MySQLConnectOptions;
import io.vertx.mysqlclient.MySQLConnection;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Real databases for the tests, one of each per test JVM, started on first use on free ports, their
 * files under {@code target/}: an embedded PostgreSQL (zonky, its binaries from Maven) and the
 * machine's own {@code mariadbd} ({@link MariaDbServer}; Debian's mariadb-server-core, which .ci/run
 * installs). Each accessor returns the gateway's {@code database} config section for it.
 *
 * <p>Fault tests can stop a database and start it again on the same port with its data kept
 * ({@link #stopPostgres()}, {@link #startPostgresAgain()}, {@link #stopMariaDb()}, {@link
 * #startMariaDbAgain()}); the accessors also start a stopped database again, so a test that fails
 * half-way does not break the ones after it. When the JVM exits, zonky's shutdown hook stops
 * PostgreSQL and ours stops MariaDB and deletes its data (its log stays in {@code
 * target/test-mariadb}).
 */
public final class TestDatabases {

  public static final String DATABASE = "counters";

  private static final Path TARGET = Paths.get("target").toAbsolutePath();
  private static final Path PG_DATA = TARGET.resolve("test-pg").resolve("data");
  private static final Path MARIADB_HOME = TARGET.resolve("test-mariadb");
  private static final long TIMEOUT_SECONDS = 60;

  // PostgreSQL: the port is chosen before the first start (FreePorts) and kept for restarts.
  private static EmbeddedPostgresServer postgres;
  private static int postgresPort;

  // MariaDB: one server for the JVM, its port chosen when its data directory is made.
  private static MariaDbServer mariaDb;

  private static final List<FileLock> CLAIMS = new ArrayList<>();

  private TestDatabases() {}

  /** The config section of the embedded PostgreSQL, started (with an empty data directory) if needed. */
  public static synchronized JsonObject postgres() {
    if (postgres == null) {
      startPostgres();
    }
    return config("postgres", postgresPort, "postgres", postgres.password());
  }

  /** Stops the embedded PostgreSQL, keeping its data and port for {@link #startPostgresAgain()}. */
  public static synchronized void stopPostgres() {
    if (postgres != null) {
      postgres.close();
      postgres = null;
    }
  }

  /** Starts the embedded PostgreSQL again on the same port and data directory, data kept. */
  public static synchronized void startPostgresAgain() {
    if (postgresPort == 0) {
      throw new IllegalStateException("postgres() was never called");
    }
    if (postgres == null) {
      startPostgres();
    }
  }

  /**
   * The config section of the test MariaDB (root, no password, every right), started (with an empty data directory)
   * if needed.
   *
   * @throws IllegalStateException naming the Debian packages to install where the machine has no mariadbd
   */
  public static synchronized JsonObject mariadb() {
    startMariaDb();
    return config("mysql", mariaDb.port(), "root", "");
  }

  /** Stops the test MariaDB as a service stop does, keeping its data and port for {@link #startMariaDbAgain()}. */
  public static synchronized void stopMariaDb() {
    if (mariaDb != null) {
      mariaDb.stop();
    }
  }

  /** Starts the test MariaDB again on the same port and data directory, data kept. */
  public static synchronized void startMariaDbAgain() {
    if (mariaDb == null) {
      throw new IllegalStateException("mariadb() was never called");
    }
    startMariaDb();
  }

  /** {@code password}: the embedded PostgreSQL's own (made at its first start, kept in its data directory). */
  private static JsonObject config(String kind, int port, String user, String password) {
    return new JsonObject()
        .put("kind", kind)
        .put("host", "127.0.0.1")
        .put("port", port)
        .put("name", DATABASE)
        .put("user", user)
        .put("password", password);
  }

  private static void startPostgres() {
    int port = postgresPort;
    if (port == 0) { // first start in this JVM: begin with no data
      claim(PG_DATA.getParent());
      stopOrphan(PG_DATA.resolve("postmaster.pid"), "/postgres");
      deleteRecursively(PG_DATA);
      // not one the server picks: that one is ephemeral, and an outgoing connection may take it while an outage
      // test has the server stopped
      port = FreePorts.take();
    }
    postgres = EmbeddedPostgresServer.start(PG_DATA, port, DATABASE);
    postgresPort = port;
  }

  private static void startMariaDb() {
    if (mariaDb == null) { // first start in this JVM: begin with no data
      claim(MARIADB_HOME);
      stopOrphan(MARIADB_HOME.resolve(MariaDbServer.PID_FILE), "/mariadbd");
      Path tls = mariaDbTlsFiles();
      // TLS offered, not required (the tests' plain connections are not refused), with a certificate of a CA the
      // tests make, so that a gateway's database.ssl modes can be shown against it
      mariaDb = MariaDbServer.install(MARIADB_HOME, List.of(
          "--ssl-cert=" + tls.resolve("server.crt"),
          "--ssl-key=" + tls.resolve("server.key"),
          "--ssl-ca=" + tls.resolve("ca.crt")));
      MariaDbServer server = mariaDb;
      Runtime.getRuntime().addShutdownHook(new Thread(server::remove, "test-mariadb-stop"));
    }
    if (!mariaDb.running()) {
      mariaDb.start();
      createMariaDbDatabase(mariaDb.port());
    }
  }

  /** The PEM CA file that vouches for the test MariaDB's certificate (for localhost and 127.0.0.1). */
  public static synchronized Path mariaDbCaFile() {
    mariadb();
    return MARIADB_HOME.resolve("tls").resolve("ca.crt");
  }

  private static Path mariaDbTlsFiles() {
    Path tls = MARIADB_HOME.resolve("tls");
    TestCertificates.Authority authority = TestCertificates.authority("test MariaDB CA");
    authority.issue("localhost", "localhost", "127.0.0.1").write(tls.resolve("server.crt"), tls.resolve("server.key"));
    authority.writeCertificate(tls.resolve("ca.crt"));
    return tls;
  }

  /** Creates the database through Vert.x, as the gateway would connect: TCP, root, no password. */
  private static void createMariaDbDatabase(int port) {
    Vertx vertx = Vertx.vertx();
    try {
      MySQLConnectOptions options =
          new MySQLConnectOptions()
              .setHost("127.0.0.1")
              .setPort(port)
              .setUser("root")
              .setPassword("");
      Future<Void> created =
          MySQLConnection.connect(vertx, options)
              .compose(
                  connection ->
                      connection
                          .query("CREATE DATABASE IF NOT EXISTS " + DATABASE)
                          .execute()
                          .<Void>mapEmpty()
                          .eventually(connection::close));
      created.toCompletionStage().toCompletableFuture().get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      throw new IllegalStateException("could not create database " + DATABASE + " in MariaDB", e);
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().join();
    }
  }

  /**
   * Locks {@code directory} for the rest of this JVM's life, so that a second test JVM of the same
   * module (parallel forks, another build) fails clearly instead of wiping or killing our server.
   */
  private static void claim(Path directory) {
    try {
      Files.createDirectories(directory);
      FileChannel channel =
          FileChannel.open(
              directory.resolve("owner.lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
      FileLock lock;
      try {
        lock = channel.tryLock();
      } catch (OverlappingFileLockException alreadyOurs) {
        channel.close();
        return;
      }
      if (lock == null) {
        channel.close();
        throw new IllegalStateException(
            directory + " is in use by another test JVM; run one test JVM per module at a time");
      }
      CLAIMS.add(lock); // never released: the OS drops it when the JVM exits
    } catch (IOException e) {
      throw new UncheckedIOException("could not lock " + directory, e);
    }
  }

  /** A server left running by a test JVM that was killed would hold on to its files. */
  private static void stopOrphan(Path pidFile, String commandSuffix) {
    try {
      if (!Files.isRegularFile(pidFile)) {
        return;
      }
      String firstLine = Files.readAllLines(pidFile, StandardCharsets.US_ASCII).get(0);
      long pid = Long.parseLong(firstLine.trim());
      Optional<ProcessHandle> process = ProcessHandle.of(pid);
      if (process.flatMap(p -> p.info().command()).filter(c -> c.endsWith(commandSuffix)).isPresent()) {
        process.get().destroy();
        process.get().onExit().get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
      }
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      // best effort: a fresh start reports any real problem
    }
  }

  static void deleteRecursively(Path directory) {
    if (!Files.exists(directory)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(directory)) {
      for (Path path : (Iterable<Path>) paths.sorted(Comparator.reverseOrder())::iterator) {
        Files.delete(path);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("could not delete " + directory, e);
    }
  }
}
