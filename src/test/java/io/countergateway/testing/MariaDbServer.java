package io.countergateway.testing;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The machine's own {@code mariadbd} (Debian's {@code mariadb-server-core}) run for the tests: a data directory made
 * with {@code mariadb-install-db}, a port and a socket of its own, and no option file of the machine's read, so the
 * MariaDB service a machine may run beside it is never touched. Its accounts are real: {@code root} from loopback
 * with no password and every right, nobody else until a test creates them.
 *
 * <p>{@link #stop()} ends the server as a service stop does (SIGTERM, InnoDB shut down cleanly); {@link #start()}
 * starts it again on the same port with the same data. Blocking throughout: never on an event loop.
 */
final class MariaDbServer {
  static final String PACKAGES = "mariadb-server-core mariadb-client-core";
  /** In the server's home: names a server that outlived a killed JVM. */
  static final String PID_FILE = "mariadbd.pid";
  /** Where Debian puts them: {@code /usr/sbin} is not on every user's PATH. */
  private static final List<Path> PLACES = List.of(Paths.get("/usr/sbin"), Paths.get("/usr/bin"));
  private static final Duration START_WAIT = Duration.ofSeconds(120);
  private static final Duration STOP_WAIT = Duration.ofSeconds(60);
  /** What the server writes to its error log once it accepts connections. */
  private static final String READY = "ready for connections";
  /** Unix socket paths are limited to 107 bytes. */
  private static final int SOCKET_PATH_MAX = 100;

  private final Path home;
  private final Path data;
  private final Path log;
  private final Path pidFile;
  private final Path socket;
  private final Path mariadbd;
  private final int port;
  private final List<String> extraArguments;
  private Process process;

  private MariaDbServer(Path home, Path mariadbd, int port, List<String> extraArguments) throws IOException {
    this.home = home;
    this.data = home.resolve("data");
    this.log = home.resolve("mariadbd.log");
    this.pidFile = home.resolve(PID_FILE);
    Path nearby = home.resolve("mariadbd.sock");
    this.socket = nearby.toString().length() <= SOCKET_PATH_MAX ? nearby
      : Files.createTempDirectory("cg-mariadb-").resolve("mariadbd.sock");
    this.mariadbd = mariadbd;
    this.port = port;
    this.extraArguments = List.copyOf(extraArguments);
  }

  /**
   * A new, empty data directory under {@code home} (whatever was there is deleted), a free port, the server not yet
   * started. {@code extraArguments} are passed to {@code mariadbd} at every start.
   *
   * @throws IllegalStateException naming the Debian packages to install when a program is missing
   */
  static MariaDbServer install(Path home, List<String> extraArguments) {
    Path mariadbd = locate("mariadbd", searchPath());
    Path installDb = locate("mariadb-install-db", searchPath());
    locate("my_print_defaults", searchPath()); // mariadb-install-db runs it (mariadb-client-core) before the server
    try {
      TestDatabases.deleteRecursively(home.resolve("data"));
      Files.createDirectories(home.resolve("tmp"));
      MariaDbServer server = new MariaDbServer(home, mariadbd, FreePorts.take(), extraArguments);
      server.installData(installDb);
      return server;
    } catch (IOException e) {
      throw new UncheckedIOException("could not prepare the test MariaDB under " + home, e);
    }
  }

  /** PATH's directories, then Debian's places for the server's programs. */
  static List<Path> searchPath() {
    List<Path> dirs = new ArrayList<>();
    for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      if (!dir.isEmpty()) {
        dirs.add(Paths.get(dir));
      }
    }
    dirs.addAll(PLACES);
    return dirs;
  }

  /** The first executable {@code program} in {@code dirs}; a missing one fails, never skips, naming the packages. */
  static Path locate(String program, List<Path> dirs) {
    return dirs.stream().map(dir -> dir.resolve(program)).filter(Files::isExecutable).findFirst()
      .orElseThrow(() -> new IllegalStateException("The MariaDB tests run the machine's MariaDB server, and " + program
        + " is not installed (looked in " + String.join(", ", dirs.stream().map(Path::toString).distinct().toList())
        + "): apt-get install " + PACKAGES + " (.ci/run installs them; both hold binaries only and start no service)"));
  }

  int port() {
    return port;
  }

  /** The server's own output, kept across restarts and after the JVM exits. */
  Path log() {
    return log;
  }

  boolean running() {
    return process != null && process.isAlive();
  }

  /** Starts the server on its port with its data and waits until it accepts connections. */
  synchronized void start() {
    start(List.of());
  }

  /** As {@link #start()}, with {@code moreArguments} after the server's own for this start only. */
  synchronized void start(List<String> moreArguments) {
    if (running()) {
      return;
    }
    try {
      long logOffset = Files.exists(log) ? Files.size(log) : 0;
      List<String> command = new ArrayList<>(List.of(mariadbd.toString(),
        "--no-defaults", // never the machine's /etc/mysql: its datadir, socket and port are the system service's
        "--datadir=" + data,
        "--tmpdir=" + home.resolve("tmp"),
        "--port=" + port,
        "--bind-address=127.0.0.1",
        "--socket=" + socket,
        "--pid-file=" + pidFile,
        "--skip-name-resolve",
        // the packet size the tests were written against (mariadbd's own default is 16M)
        "--max-allowed-packet=64M"));
      command.addAll(asRootIfRoot());
      command.addAll(extraArguments);
      command.addAll(moreArguments);
      process = new ProcessBuilder(command).redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
      awaitReady(logOffset);
    } catch (IOException e) {
      throw new UncheckedIOException("could not start " + mariadbd, e);
    }
  }

  /** Stops the server as a service stop does and waits until it has exited; its data and port are kept. */
  synchronized void stop() {
    if (process == null) {
      return;
    }
    Process stopping = process;
    process = null;
    stopping.destroy();
    try {
      if (!stopping.waitFor(STOP_WAIT.toSeconds(), TimeUnit.SECONDS)) {
        stopping.destroyForcibly().waitFor(STOP_WAIT.toSeconds(), TimeUnit.SECONDS);
        throw new IllegalStateException("mariadbd did not stop within " + STOP_WAIT.toSeconds()
          + " s and was killed; its log: " + log);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while mariadbd stopped", e);
    }
  }

  /** SIGKILL: the server ends at once, as a crash ends it, whatever its clients were waiting for. */
  synchronized void crash() {
    if (process == null) {
      return;
    }
    Process killed = process;
    process = null;
    try {
      if (!killed.destroyForcibly().waitFor(STOP_WAIT.toSeconds(), TimeUnit.SECONDS)) {
        throw new IllegalStateException("mariadbd did not end within " + STOP_WAIT.toSeconds() + " s of SIGKILL");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while mariadbd was killed", e);
    }
  }

  /** Stops the server and deletes its data; the log stays, for a look after a failed run. */
  synchronized void remove() {
    stop();
    TestDatabases.deleteRecursively(data);
    if (!socket.startsWith(home)) {
      TestDatabases.deleteRecursively(socket.getParent());
    }
  }

  private void installData(Path installDb) throws IOException {
    List<String> command = new ArrayList<>(List.of(installDb.toString(),
      "--no-defaults",
      "--datadir=" + data,
      // root from loopback with no password, as the tests' config sections say; accounts are named by address
      "--auth-root-authentication-method=normal",
      "--skip-name-resolve",
      "--skip-test-db"));
    command.addAll(asRootIfRoot());
    Path installLog = home.resolve("install.log");
    Process install = new ProcessBuilder(command).redirectErrorStream(true)
      .redirectOutput(installLog.toFile()).start();
    try {
      if (!install.waitFor(START_WAIT.toSeconds(), TimeUnit.SECONDS)) {
        install.destroyForcibly();
        throw new IllegalStateException("mariadb-install-db did not finish within " + START_WAIT.toSeconds()
          + " s; its output: " + installLog);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while mariadb-install-db ran", e);
    }
    if (install.exitValue() != 0) {
      throw new IllegalStateException("mariadb-install-db failed with exit code " + install.exitValue() + ":\n"
        + Files.readString(installLog));
    }
  }

  /** mariadbd refuses to run as root unless told to; as another user it runs as that user. */
  private static List<String> asRootIfRoot() {
    return "root".equals(System.getProperty("user.name")) ? List.of("--user=root") : List.of();
  }

  private void awaitReady(long logOffset) throws IOException {
    long deadline = System.nanoTime() + START_WAIT.toNanos();
    while (true) {
      String output = logSince(logOffset);
      if (output.contains(READY)) {
        return;
      }
      if (!process.isAlive()) {
        int exit = process.exitValue();
        process = null;
        throw new IllegalStateException("mariadbd exited with code " + exit + " while starting on 127.0.0.1:" + port
          + "; its output (" + log + "):\n" + output);
      }
      if (System.nanoTime() > deadline) {
        stop();
        throw new IllegalStateException("mariadbd did not accept connections within " + START_WAIT.toSeconds()
          + " s; its output (" + log + "):\n" + output);
      }
      try {
        Thread.sleep(50);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while mariadbd started", e);
      }
    }
  }

  private String logSince(long offset) throws IOException {
    byte[] all = Files.readAllBytes(log);
    return new String(all, (int) Math.min(offset, all.length), (int) Math.max(0, all.length - offset),
      StandardCharsets.UTF_8);
  }
}
