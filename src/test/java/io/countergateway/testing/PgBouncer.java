package io.countergateway.testing;

import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A PgBouncer (Debian {@code pgbouncer}) of its own, in a temporary directory, on a free loopback port, in front of a
 * PostgreSQL given as a {@code database} config section: clients log in to it without a password (auth_type trust),
 * and it logs in to the server with the section's credentials.
 */
public final class PgBouncer implements AutoCloseable {
  public static final Path BINARY = Path.of("/usr/sbin/pgbouncer");
  /** PgBouncer refuses to run as root (as CI does): it is asked to switch to this user. */
  private static final String UNPRIVILEGED_USER = "nobody";

  private final Process process;
  private final Path directory;
  private final int port;

  private PgBouncer(Process process, Path directory, int port) {
    this.process = process;
    this.directory = directory;
    this.port = port;
  }

  /** Skips the calling test, saying why, where the Debian package is not installed. */
  public static void assumeInstalled() {
    Assumptions.assumeTrue(Files.isExecutable(BINARY), BINARY + " is missing (apt-get install pgbouncer)");
  }

  /** {@code poolMode}: {@code session}, {@code transaction} or {@code statement}; 20 server connections. */
  public static PgBouncer start(JsonObject server, String poolMode) {
    return start(server, poolMode, 20);
  }

  /** As {@link #start(JsonObject, String)}, with at most {@code poolSize} server connections for the database. */
  public static PgBouncer start(JsonObject server, String poolMode, int poolSize) {
    try {
      Path directory = Files.createTempDirectory("pgbouncer-", PosixFilePermissions.asFileAttribute(
        PosixFilePermissions.fromString("rwxrwxrwx")));
      Files.setPosixFilePermissions(directory, PosixFilePermissions.fromString("rwxrwxrwx"));
      int port = FreePorts.take();
      String database = server.getString("name");
      Files.writeString(directory.resolve("users.txt"), "\"" + server.getString("user") + "\" \"\"\n");
      Files.writeString(directory.resolve("pgbouncer.ini"), String.join("\n",
        "[databases]",
        database + " = host=" + server.getString("host") + " port=" + server.getInteger("port") + " dbname=" + database
          + " user=" + server.getString("user") + " password=" + server.getString("password", ""),
        "[pgbouncer]",
        "listen_addr = 127.0.0.1",
        "listen_port = " + port,
        "unix_socket_dir =",
        "auth_type = trust",
        "auth_file = " + directory.resolve("users.txt"),
        "pool_mode = " + poolMode,
        "default_pool_size = " + poolSize,
        "max_client_conn = 200",
        // as most set-ups have it: the Vert.x and JDBC clients send it, and PgBouncer does not track it
        "ignore_startup_parameters = extra_float_digits",
        "logfile = " + directory.resolve("pgbouncer.log"),
        ""));
      for (String file : List.of("users.txt", "pgbouncer.ini")) {
        Files.setPosixFilePermissions(directory.resolve(file), PosixFilePermissions.fromString("rw-r--r--"));
      }
      ProcessBuilder builder = new ProcessBuilder(BINARY.toString(), directory.resolve("pgbouncer.ini").toString())
        .redirectErrorStream(true).redirectOutput(directory.resolve("stdout.log").toFile());
      if ("root".equals(System.getProperty("user.name"))) {
        builder.command().add(1, "-u");
        builder.command().add(2, UNPRIVILEGED_USER);
      }
      PgBouncer bouncer = new PgBouncer(builder.start(), directory, port);
      bouncer.awaitListening();
      return bouncer;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The {@code database} config section that reaches the server through this PgBouncer. */
  public JsonObject database(JsonObject server) {
    return server.copy().put("host", "127.0.0.1").put("port", port).put("password", "");
  }

  public int port() {
    return port;
  }

  /** What PgBouncer logged, for a failure's message. */
  public String log() {
    try {
      Path log = directory.resolve("pgbouncer.log");
      return Files.exists(log) ? Files.readString(log) : Files.readString(directory.resolve("stdout.log"));
    } catch (IOException e) {
      return e.toString();
    }
  }

  private void awaitListening() {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IllegalStateException("pgbouncer exited with " + process.exitValue() + ": " + log());
      }
      try (Socket socket = new Socket()) {
        socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
        return;
      } catch (IOException notYet) {
        try {
          Thread.sleep(50);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException(e);
        }
      }
    }
    close();
    throw new IllegalStateException("pgbouncer did not listen on " + port + " within 10 s: " + log());
  }

  @Override
  public void close() {
    process.destroy();
    try {
      if (!process.waitFor(5, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
