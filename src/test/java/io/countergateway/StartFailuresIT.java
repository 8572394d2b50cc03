package io.countergateway;

import io.countergateway.config.ConfigLoader;
import io.countergateway.internal.store.EmbeddedPostgresServer;
import io.countergateway.testing.DirectSql;
import io.countergateway.testing.FreePorts;
import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.TestDatabases;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Starts that fail, as an operator meets them: {@code Main} in a JVM of its own per case (all at once), each expected
 * to end with a non-zero exit code soon after its one error line, which names what to fix, and no stack trace. What
 * another process holds (the HTTP port, the embedded database's data directory) is refused before the embedded
 * database starts, naming the holder.
 */
class StartFailuresIT {
  /** From the error line to the exit: Vert.x's close and the shutdown hooks are bounded well below this. */
  private static final long EXIT_AFTER_LINE_MS = 10_000;
  /** The whole run of a case, JVM start and the database probe's deadline included. */
  private static final long CASE_MS = 60_000;

  @TempDir
  static Path dir;

  /** One run of Main: its exit code, its output, and how long after the error line it exited. */
  record Run(int exitCode, List<String> lines, long exitAfterLineMs) {
    List<String> errorLines() {
      return lines.stream().filter(line -> line.contains(" ERROR ") || line.contains("\"level\":\"ERROR\"")).toList();
    }

    List<String> stackLines() {
      return lines.stream().filter(line -> line.matches("\\s+at \\S+\\(.*") || line.startsWith("Caused by")).toList();
    }
  }

  /** A role of the test PostgreSQL that must give its password (every other role is trusted there). */
  private static final String PASSWORD_ROLE = "cg_password_test";
  private static final Path PG_HBA = Path.of("target", "test-pg", "data", "pg_hba.conf");

  @BeforeAll
  static void databases() throws IOException {
    TestDatabases.postgres();
    TestDatabases.mariadb();
    requirePasswordOfOneRole();
  }

  /**
   * A role of the test PostgreSQL whose password this test knows (the postgres role's is made at random), asked for
   * by a line of pg_hba.conf for that role alone, so no other test is touched. The test MariaDB's root has an empty
   * password, which it checks.
   */
  private static void requirePasswordOfOneRole() throws IOException {
    String rule = "host all " + PASSWORD_ROLE + " 127.0.0.1/32 scram-sha-256";
    String hba = Files.readString(PG_HBA);
    if (!hba.contains(rule)) {
      Files.writeString(PG_HBA, rule + "\n" + hba);
    }
    Vertx vertx = Vertx.vertx();
    try {
      Pool sql = DirectSql.pool(vertx, "postgres");
      GatewayFixture.await(sql.query("DO $$ BEGIN CREATE ROLE " + PASSWORD_ROLE + " LOGIN; "
          + "EXCEPTION WHEN duplicate_object THEN NULL; END $$").execute()
        .compose(done -> sql.query("ALTER ROLE " + PASSWORD_ROLE + " PASSWORD 'the-password'").execute())
        .compose(done -> sql.query("SELECT pg_reload_conf()").execute())
        .eventually(sql::close));
    } finally {
      GatewayFixture.await(vertx.close());
    }
  }

  @Test
  @DisplayName("every failed start exits non-zero within the bound, with one error line naming what to fix and no stack")
  void failedStartsSayWhatToFix() throws Exception {
    Path yamlError = dir.resolve("broken.yaml");
    Files.writeString(yamlError, "http:\n  port: 8080\n  host: [127.0.0.1\nnamespaces:\n  likes: {}\n");
    int postgresPort = TestDatabases.postgres().getInteger("port");
    int mariaDbPort = TestDatabases.mariadb().getInteger("port");
    int nobody = FreePorts.take();

    Map<String, CompletableFuture<Run>> runs = new LinkedHashMap<>();
    ExecutorService pool = Executors.newFixedThreadPool(4);
    // what another process holds, here this test's JVM: the HTTP port, and the lock of an embedded database's data
    // directory as a running gateway's embedded PostgreSQL holds it
    Path busyData = Files.createDirectories(dir.resolve("busy-data"));
    try (ServerSocket takenPort = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
         FileChannel lockFile = FileChannel.open(busyData.resolve(EmbeddedPostgresServer.LOCK_FILE),
           StandardOpenOption.CREATE, StandardOpenOption.WRITE);
         FileLock dataLock = lockFile.lock()) {
      String thisJvm = "pid " + ProcessHandle.current().pid();
      runs.put("HTTP port in use", start(pool, Map.of("CG_HTTP_PORT", Integer.toString(takenPort.getLocalPort())),
        "--config", config("port-taken", embedded(dir.resolve("port-taken-data")))));
      runs.put("data directory in use", start(pool, Map.of(), "--config", config("data-taken", embedded(busyData))));
      runs.put("missing file", start(pool, Map.of(), "--config", dir.resolve("nowhere/gateway.yaml").toString()));
      runs.put("YAML error", start(pool, Map.of(), "--config", yamlError.toString()));
      runs.put("mysql on PostgreSQL's port", start(pool, Map.of(), "--config",
        config("mysql-on-pg", database("mysql", postgresPort, "root", ""))));
      runs.put("postgres on MariaDB's port", start(pool, Map.of(), "--config",
        config("pg-on-mariadb", database("postgres", mariaDbPort, "postgres", ""))));
      runs.put("connection refused", start(pool, Map.of(), "--config",
        config("refused", database("postgres", nobody, "postgres", ""))));
      runs.put("bad password", start(pool, Map.of(), "--config",
        config("bad-password", database("postgres", postgresPort, PASSWORD_ROLE, "not-the-password"))));
      runs.put("bad password, MariaDB", start(pool, Map.of(), "--config",
        config("bad-password-mariadb", database("mysql", mariaDbPort, "root", "not-the-password"))));
      runs.put("connection refused, JSON logs", start(pool, Map.of("CG_LOGGING_FORMAT", "json"), "--config",
        config("refused-json", database("postgres", nobody, "postgres", ""))));
      runs.put("missing file, JSON logs", start(pool, Map.of("CG_LOGGING_FORMAT", "json"), "--config",
        dir.resolve("nowhere/gateway.yaml").toString()));
      // 1,000,000 connections of ~8 KiB each alone take ~7.6 GiB: more than the 256 MiB heap
      runs.put("bounds past the heap", start(pool, Map.of("CG_LIMITS_MAX_CONNECTIONS", "1000000"), "--config",
        config("bounds-past-heap", database("postgres", postgresPort, "postgres", ""))));

      assertFailed(runs.get("missing file").get(), 2, "nowhere/gateway.yaml", "does not exist", "--config");
      assertFailed(runs.get("YAML error").get(), 2, "broken.yaml", "not valid YAML", "line ");
      assertFailed(runs.get("mysql on PostgreSQL's port").get(), 1, "database.host", "database.port",
        "127.0.0.1:" + postgresPort, "database.kind");
      assertFailed(runs.get("postgres on MariaDB's port").get(), 1, "database.host", "database.port",
        "127.0.0.1:" + mariaDbPort, "database.kind");
      assertFailed(runs.get("connection refused").get(), 1, "database.host", "database.port",
        "127.0.0.1:" + nobody, "connection refused");
      assertFailed(runs.get("bad password").get(), 1, "database.user", "database.password", "database.passwordFile",
        "127.0.0.1:" + postgresPort, PASSWORD_ROLE);
      assertFailed(runs.get("bad password, MariaDB").get(), 1, "database.user", "database.password",
        "127.0.0.1:" + mariaDbPort, "'root'");
      Run json = runs.get("connection refused, JSON logs").get();
      assertFailed(json, 1, "database.host", "database.port");
      assertThat(new JsonObject(json.errorLines().get(0)).getString("message")).contains("database.port")
        .contains("127.0.0.1:" + nobody);
      Run jsonMissing = runs.get("missing file, JSON logs").get();
      assertFailed(jsonMissing, 2, "does not exist");
      assertThat(new JsonObject(jsonMissing.errorLines().get(0)).getString("event")).isEqualTo("start_failed");
      assertFailed(runs.get("bounds past the heap").get(), 1, "limits.maxConnections", "of the maximum heap of",
        "raise -Xmx", "or lower limits.maxConnections");
      assertFailed(runs.get("HTTP port in use").get(), 1, "http.port: 127.0.0.1:" + takenPort.getLocalPort()
        + " is in use by " + thisJvm, "CG_HTTP_PORT");
      assertThat(dir.resolve("port-taken-data/PG_VERSION")).as("checked before the embedded database starts")
        .doesNotExist();
      assertFailed(runs.get("data directory in use").get(), 1, "database.dataDir: another gateway uses "
        + busyData.toAbsolutePath().normalize() + " (" + thisJvm);
      assertThat(busyData.resolve("PG_VERSION")).doesNotExist();
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  @DisplayName("a second gateway on a running one's journal directory is refused in one line naming journal.dir and "
    + "the holder, before it creates its schema")
  void secondGatewayOnOneJournal() throws Exception {
    JsonObject postgres = TestDatabases.postgres();
    JsonObject first = GatewayFixture.baseConfig(postgres, "journal_first");
    String journal = first.getJsonObject("journal").getString("dir");
    try (GatewayFixture running = GatewayFixture.start(first)) {
      JsonObject second = GatewayFixture.baseConfig(postgres, "journal_second");
      second.getJsonObject("journal").put("dir", journal);
      Path file = dir.resolve("journal-taken.yaml");
      Files.writeString(file, second.encodePrettily());

      Run run = run(Map.of(), "--config", file.toString());

      assertFailed(run, 1, "journal.dir: another gateway uses " + Path.of(journal).toAbsolutePath().normalize()
        + " (pid " + ProcessHandle.current().pid(), "CG_JOURNAL_DIR");
      assertThat(run.errorLines().get(0)).doesNotContain("Exception");
      assertThat(DirectSql.longValue(running.sql(), "SELECT count(*) FROM information_schema.tables "
        + "WHERE table_name LIKE 'journal_second%'")).as("tables the second gateway created").isZero();
    }
  }

  private static void assertFailed(Run run, int exitCode, String... named) {
    String output = String.join("\n", run.lines());
    assertThat(run.exitCode()).as(output).isEqualTo(exitCode);
    assertThat(run.errorLines()).as(output).hasSize(1);
    assertThat(run.errorLines().get(0)).as(output).contains(named);
    assertThat(run.stackLines()).as(output).isEmpty();
    assertThat(run.exitAfterLineMs()).as(output).isLessThan(EXIT_AFTER_LINE_MS);
  }

  /** The embedded PostgreSQL, the default, with its data in {@code dataDir}. */
  private static JsonObject embedded(Path dataDir) {
    return new JsonObject().put("kind", "embedded-postgres").put("dataDir", dataDir.toString());
  }

  private static JsonObject database(String kind, int port, String user, String password) {
    return new JsonObject().put("kind", kind).put("host", "127.0.0.1").put("port", port)
      .put("name", TestDatabases.DATABASE).put("user", user).put("password", password);
  }

  /** A configuration file (JSON is YAML) of the test gateway's, with {@code database}. */
  private static String config(String name, JsonObject database) {
    JsonObject config = GatewayFixture.baseConfig(database, "start_failures");
    Path file = dir.resolve(name + ".yaml");
    try {
      Files.writeString(file, config.encodePrettily());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return file.toString();
  }

  private static CompletableFuture<Run> start(ExecutorService pool, Map<String, String> env, String... args) {
    return CompletableFuture.supplyAsync(() -> run(env, args), pool);
  }

  /** Main in its own JVM, as an operator starts it; standard output and error together, as a container log has them. */
  private static Run run(Map<String, String> env, String... args) {
    List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
      "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
      Main.class.getName()));
    command.addAll(List.of(args));
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).directory(dir.toFile());
    builder.environment().keySet().removeIf(name -> name.startsWith(ConfigLoader.ENV_PREFIX));
    builder.environment().putAll(env);
    try {
      Process process = builder.start();
      long started = System.nanoTime();
      // a start that hangs keeps its output open: it is ended here, and the case fails below
      CompletableFuture.delayedExecutor(CASE_MS, TimeUnit.MILLISECONDS).execute(process::destroyForcibly);
      List<String> lines = new ArrayList<>();
      long errorAt = 0;
      try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
        for (String line = out.readLine(); line != null; line = out.readLine()) {
          lines.add(line);
          if (errorAt == 0 && (line.contains(" ERROR ") || line.contains("\"level\":\"ERROR\""))) {
            errorAt = System.nanoTime();
          }
        }
      }
      process.waitFor();
      if (System.nanoTime() - started >= TimeUnit.MILLISECONDS.toNanos(CASE_MS)) {
        throw new AssertionError("Main did not exit within " + CASE_MS + " ms: " + String.join("\n", lines));
      }
      long exitAfterLine = errorAt == 0 ? Long.MAX_VALUE : TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - errorAt);
      return new Run(process.exitValue(), lines, exitAfterLine);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
