package io.countergateway.testing;

import io.vertx.core.json.JsonObject;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The system's PostgreSQL server ({@code /usr/lib/postgresql/<version>/bin}) run as the {@code postgres} user on one
 * of {@link NetworkHosts}, listening on that host's address only, with a data directory of its own that is deleted at
 * {@link #close()}. Clients on the private network connect without a password (trust for 10.77.0.0/24 only: the
 * network exists only on this machine, for the test's life).
 */
public final class PostgresOnHost implements AutoCloseable {
  public static final int PORT = 5432;
  private static final String USER = "postgres";

  private final Path home;
  private final String address;
  private final Process server;

  private PostgresOnHost(Path home, String address, Process server) {
    this.home = home;
    this.address = address;
    this.server = server;
  }

  /** The server binaries' directory, or null when no PostgreSQL server is installed. */
  public static Path binaries() {
    try (Stream<Path> versions = Files.list(Path.of("/usr/lib/postgresql"))) {
      return versions.map(version -> version.resolve("bin"))
        .filter(bin -> Files.isExecutable(bin.resolve("postgres")) && Files.isExecutable(bin.resolve("initdb")))
        .max(Comparator.naturalOrder()).orElse(null);
    } catch (IOException e) {
      return null;
    }
  }

  /** initdb, then the server on {@code host}; waits until it accepts connections on its address. */
  public static PostgresOnHost start(NetworkHosts hosts, String host, Duration timeout) {
    Path bin = binaries();
    if (bin == null) {
      throw new IllegalStateException("no PostgreSQL server under /usr/lib/postgresql");
    }
    try {
      Path home = Files.createTempDirectory("cgnet-postgres-");
      Path data = home.resolve("data");
      UserPrincipalLookupService users = home.getFileSystem().getUserPrincipalLookupService();
      Files.setOwner(home, users.lookupPrincipalByName(USER));
      runAsPostgres(home, List.of(bin.resolve("initdb").toString(), "-D", data.toString(), "-U", USER,
        "-A", "trust", "-E", "UTF8", "--no-sync"), Duration.ofSeconds(60));
      Files.writeString(data.resolve("pg_hba.conf"), "host all all 10.77.0.0/24 trust\n",
        java.nio.file.StandardOpenOption.APPEND);
      String address = hosts.address(host);
      List<String> command = new ArrayList<>(hosts.launcher(host));
      command.addAll(asPostgres(List.of(bin.resolve("postgres").toString(), "-D", data.toString(),
        "-c", "listen_addresses=" + address, "-c", "port=" + PORT, "-c", "unix_socket_directories=" + home,
        "-c", "max_connections=200", "-c", "fsync=off", "-c", "full_page_writes=off")));
      Process server = new ProcessBuilder(command).directory(home.toFile()).redirectErrorStream(true)
        .redirectOutput(home.resolve("server.log").toFile()).start();
      PostgresOnHost postgres = new PostgresOnHost(home, address, server);
      postgres.awaitAccepting(hosts, host, bin, timeout);
      return postgres;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private void awaitAccepting(NetworkHosts hosts, String host, Path bin, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (!server.isAlive()) {
        throw new IllegalStateException("postgres exited with " + server.exitValue() + ": " + log());
      }
      List<String> ready = new ArrayList<>(hosts.launcher(host));
      ready.addAll(List.of(bin.resolve("pg_isready").toString(), "-q", "-h", address, "-p", Integer.toString(PORT)));
      if (exit(ready, Duration.ofSeconds(10)) == 0) {
        return;
      }
      GatewayProcess.sleep(100);
    }
    throw new IllegalStateException("postgres did not accept connections within " + timeout + ": " + log());
  }

  /** The gateway's {@code database} section for a database {@code name} on this server. */
  public JsonObject config(String name) {
    return new JsonObject().put("kind", "postgres").put("host", address).put("port", PORT).put("name", name)
      .put("user", USER).put("password", "");
  }

  /** SIGSTOP to the server and every backend: connections stay open, nothing answers, nothing is refused. */
  public void pause() {
    signal("STOP", processes());
  }

  /** SIGCONT, backends first, so the postmaster finds them running. */
  public void resume() {
    List<ProcessHandle> all = processes();
    java.util.Collections.reverse(all);
    signal("CONT", all);
  }

  private List<ProcessHandle> processes() {
    List<ProcessHandle> all = new ArrayList<>();
    all.add(server.toHandle());
    server.toHandle().descendants().forEach(all::add);
    return all;
  }

  private static void signal(String signal, List<ProcessHandle> processes) {
    List<String> command = new ArrayList<>(List.of("kill", "-" + signal));
    processes.forEach(process -> command.add(Long.toString(process.pid())));
    exit(command, Duration.ofSeconds(10));
  }

  public String log() {
    try {
      List<String> lines = Files.readAllLines(home.resolve("server.log"));
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

  /** Fast shutdown (SIGINT), a kill if it lingers, then the data directory deleted. */
  @Override
  public void close() {
    resume();
    signal("INT", List.of(server.toHandle()));
    try {
      if (!server.waitFor(20, TimeUnit.SECONDS)) {
        processes().forEach(ProcessHandle::destroyForcibly);
        server.waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    try (Stream<Path> files = Files.walk(home)) {
      files.sorted(Comparator.reverseOrder()).forEach(file -> file.toFile().delete());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** PostgreSQL refuses to run as root: its programs run as the {@code postgres} user, exec'd in place. */
  private static List<String> asPostgres(List<String> command) {
    List<String> full = new ArrayList<>(List.of("setpriv", "--reuid=" + USER, "--regid=" + USER, "--init-groups"));
    full.addAll(command);
    return full;
  }

  private static void runAsPostgres(Path directory, List<String> command, Duration timeout) throws IOException {
    Process process = new ProcessBuilder(asPostgres(command)).directory(directory.toFile()).redirectErrorStream(true).start();
    String output = new String(process.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    try {
      if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS) || process.exitValue() != 0) {
        process.destroyForcibly();
        throw new IllegalStateException(String.join(" ", command) + " failed: " + output);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private static int exit(List<String> command, Duration timeout) {
    try {
      Process process = new ProcessBuilder(command).redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
      if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        process.destroyForcibly();
        return -1;
      }
      return process.exitValue();
    } catch (IOException e) {
      return -1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return -1;
    }
  }
}
