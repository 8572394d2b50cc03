package io.countergateway.testing;

import io.vertx.core.json.JsonObject;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A gateway in its own JVM ({@code io.countergateway.Main} on the test classpath), for tests that need separate
 * processes: a clustered event bus across JVMs, SIGTERM and SIGKILL. Its output goes to
 * {@code target/gateway-processes/<name>.log}. Every process started here is killed when the test JVM exits,
 * should a test forget to.
 */
public final class GatewayProcess implements AutoCloseable {
  private static final Path DIR = Paths.get("target", "gateway-processes").toAbsolutePath();
  private static final List<Process> STARTED = new ArrayList<>();

  static {
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      synchronized (STARTED) {
        STARTED.forEach(Process::destroyForcibly);
      }
    }));
  }

  private final String name;
  private final Path config;
  private final String maxHeap;
  private final List<String> launcher;
  private final Path log;
  private Process process;
  private int starts;

  private GatewayProcess(String name, Path config, String maxHeap, List<String> launcher) {
    this.name = name;
    this.config = config;
    this.maxHeap = maxHeap;
    this.launcher = List.copyOf(launcher);
    this.log = DIR.resolve(name + ".log");
  }

  /** Writes {@code config} (JSON is YAML) and starts the gateway on it; call {@link #awaitListening} next. */
  public static GatewayProcess start(String name, JsonObject config) {
    return start(name, config, "256m");
  }

  /** As {@link #start(String, JsonObject)}, with the JVM's heap limit (-Xmx) {@code maxHeap}, e.g. {@code 256m}. */
  public static GatewayProcess start(String name, JsonObject config, String maxHeap) {
    return start(name, config, maxHeap, List.of());
  }

  /**
   * As {@link #start(String, JsonObject, String)}, the java command prefixed by {@code launcher} (e.g. {@code ip netns
   * exec <host>}: a program that execs the rest in place, so signals still reach the JVM itself).
   */
  public static GatewayProcess start(String name, JsonObject config, String maxHeap, List<String> launcher) {
    try {
      Files.createDirectories(DIR);
      Path file = DIR.resolve(name + ".yaml");
      Files.writeString(file, config.encodePrettily());
      GatewayProcess gateway = new GatewayProcess(name, file, maxHeap, launcher);
      gateway.launch();
      return gateway;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Starts the same configuration again after a stop (a rolling restart). */
  public GatewayProcess restart() {
    launch();
    return this;
  }

  private void launch() {
    starts++;
    List<String> command = new ArrayList<>(launcher);
    command.addAll(List.of(
      Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
      "-Xmx" + maxHeap, "-XX:+UseSerialGC", "-Xss512k"));
    // C1 only: a start takes half the time and the CPU when two cores run the tests and several gateways at once; a
    // process here lives seconds, too short for C2's code to pay for its compiling, and the tier changes no result.
    // A throughput run (-Dthroughput=true) measures the gateway as production runs it, C2 included.
    if (!Boolean.getBoolean("throughput")) {
      command.add("-XX:TieredStopAtLevel=1");
    }
    command.addAll(List.of("-cp", System.getProperty("java.class.path"),
      "io.countergateway.Main", "--config", config.toString()));
    try {
      process = new ProcessBuilder(command)
        .redirectErrorStream(true)
        .redirectOutput(starts == 1 ? ProcessBuilder.Redirect.to(log.toFile()) : ProcessBuilder.Redirect.appendTo(log.toFile()))
        .start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    synchronized (STARTED) {
      STARTED.add(process);
    }
  }

  /** Waits for the gateway's "listening" line of this start; fails with the tail of its log otherwise. */
  public GatewayProcess awaitListening(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (countInLog("counter-gateway listening on") >= starts) {
        return this;
      }
      if (!process.isAlive()) {
        throw new IllegalStateException(name + " exited with " + process.exitValue() + ":\n" + logTail());
      }
      sleep(100);
    }
    throw new IllegalStateException(name + " did not listen within " + timeout + ":\n" + logTail());
  }

  private long countInLog(String text) {
    try {
      return Files.exists(log) ? Files.readAllLines(log).stream().filter(line -> line.contains(text)).count() : 0;
    } catch (IOException e) {
      return 0;
    }
  }

  /** Everything the process has written so far, standard output and error together. */
  public List<String> logLines() {
    try {
      return Files.readAllLines(log);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public String logTail() {
    try {
      List<String> lines = Files.readAllLines(log);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

  /** SIGTERM: the gateway drains and exits; returns its exit code. */
  public int stopGracefully(Duration timeout) {
    process.destroy();
    return waitForExit(timeout);
  }

  /** Waits for the process to end by itself (no signal sent); returns its exit code. */
  public int awaitExit(Duration timeout) {
    return waitForExit(timeout);
  }

  /** SIGKILL: nothing pending survives, nothing is released. */
  public void kill() {
    process.destroyForcibly();
    waitForExit(Duration.ofSeconds(10));
  }

  private int waitForExit(Duration timeout) {
    try {
      if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        process.destroyForcibly().waitFor();
        throw new IllegalStateException(name + " did not exit within " + timeout);
      }
      return process.exitValue();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** The process's resident set (VmRSS of /proc), in bytes; 0 when it has exited. */
  public long residentBytes() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc", Long.toString(process.pid()), "status"))) {
        if (line.startsWith("VmRSS:")) {
          return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
        }
      }
    } catch (IOException | NumberFormatException gone) {
      return 0;
    }
    return 0;
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  public String name() {
    return name;
  }

  @Override
  public void close() {
    if (process.isAlive()) {
      kill();
    }
  }

  /** Thread.sleep for test threads, interruption turned into a failure. */
  public static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
