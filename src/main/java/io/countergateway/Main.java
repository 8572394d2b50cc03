package io.countergateway;

import io.countergateway.internal.cluster.EventBusCluster;
import io.countergateway.config.ConfigLoader;
import io.countergateway.config.GatewayConfig;
import io.countergateway.internal.logging.LogSetup;
import io.countergateway.internal.metrics.VertxMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import sun.misc.Signal;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/** {@code java -jar counter-gateway.jar [--config conf/gateway.yaml]}: runs the gateway until SIGTERM or SIGINT. */
@Command(name = "counter-gateway", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
  description = "Takes counter increments over HTTP and the event bus and writes them as batched slotted upserts.")
public final class Main implements Callable<Integer> {
  private static final Logger LOG = LoggerFactory.getLogger(Main.class);
  private static final long CLOSE_TIMEOUT_SECONDS = 10;
  /** A start that failed has nothing pending: Vert.x gets this long to close, shutdown hooks as long again. */
  private static final long FAILED_START_CLOSE_SECONDS = 3;
  /** What shutdown hooks get once the process is told to exit. */
  private static final long EXIT_SECONDS = 3;
  /** The oldest Java the gateway runs on: conf/jvm.options' -XX:TrimNativeHeapInterval came with 17.0.9. */
  static final Runtime.Version MINIMUM_JAVA = Runtime.Version.parse("17.0.9");

  @Option(names = {"-c", "--config"}, description = "YAML configuration file (default: ${DEFAULT-VALUE}); "
    + "every key can be overridden by a CG_* environment variable", defaultValue = "${env:CG_CONFIG:-conf/gateway.yaml}")
  private String configPath;

  public static void main(String[] args) {
    exit(new CommandLine(new Main()).execute(args));
  }

  @Override
  public Integer call() throws Exception {
    String tooOld = javaTooOld(Runtime.version(), System.getProperty("java.home"));
    if (tooOld != null) {
      return refuseStart(null, 1, tooOld, null);
    }
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    Vertx vertx = VertxMetrics.builder(registry).build();
    GatewayConfig config;
    try {
      config = await(ConfigLoader.load(vertx, configPath));
    } catch (Exception e) {
      // the file's logging section is out of reach: the line follows CG_LOGGING_FORMAT, as the file would have
      LogSetup.apply(ConfigLoader.loggingFromEnvironment());
      return refuseStart(vertx, 2, StartFailures.configFile(e, configPath), e);
    }
    LogSetup.apply(config.getLogging());
    if (config.getCluster().isEnabled()) {
      // the clustered Vert.x replaces the local one, which holds nothing yet
      closeVertx(vertx, CLOSE_TIMEOUT_SECONDS, false);
      try {
        vertx = await(EventBusCluster.join(config.getCluster()));
      } catch (Exception e) {
        return refuseStart(null, 1, "cluster.host / cluster.port / cluster.members: cannot join the cluster '"
          + config.getCluster().getName() + "' as " + config.getCluster().getHost() + ":" + config.getCluster().getPort()
          + ": " + StartFailures.cause(e), e);
      }
      LOG.info("joined cluster '{}' as {}:{}", config.getCluster().getName(), config.getCluster().getHost(),
        config.getCluster().getPort());
    }
    Gateway gateway;
    try {
      gateway = await(Gateway.start(vertx, config, registry));
    } catch (Exception e) {
      return refuseStart(vertx, 1, StartFailures.starting(e, config), e);
    }

    CountDownLatch stopped = new CountDownLatch(1);
    AtomicBoolean stopping = new AtomicBoolean();
    java.util.concurrent.atomic.AtomicReference<Throwable> lost = new java.util.concurrent.atomic.AtomicReference<>();
    Vertx running = vertx;
    Runnable shutdown = () -> {
      if (stopping.compareAndSet(false, true)) {
        LOG.info("stopping: no new increments, flushing what is pending");
        gateway.stop().onComplete(done -> {
          lost.set(done.cause());
          stopped.countDown();
        });
      }
    };
    // Our own signal handlers, not a shutdown hook: the flush must finish before the embedded database stops
    // (Gateway.stop stops it last).
    Signal.handle(new Signal("TERM"), signal -> shutdown.run());
    Signal.handle(new Signal("INT"), signal -> shutdown.run());
    // crash-only on a broken disk: after a failed write or fsync nothing proves what the journal's file holds, and only
    // the replay of a new start writes it; drain what can be drained, then exit so the supervisor starts a new process
    // (a container restart keeps an emptyDir journal; a probe that waited would risk an eviction, which does not)
    AtomicBoolean journalFailed = new AtomicBoolean();
    gateway.journalFailure().onSuccess(cause -> {
      journalFailed.set(true);
      LOG.atError().addKeyValue("event", "exit_for_restart").addKeyValue("exit_code", Gateway.EXIT_RESTART_NEEDED)
        .log("stopping after the journal failed: draining what can be written, then exiting with {} to be "
          + "restarted; the restart replays the journal", Gateway.EXIT_RESTART_NEEDED);
      shutdown.run();
    });
    stopped.await();
    closeVertx(running, CLOSE_TIMEOUT_SECONDS, true);
    if (journalFailed.get()) {
      LOG.error("stopped after the journal failed; exiting with {} so that the gateway is started again",
        Gateway.EXIT_RESTART_NEEDED);
      return Gateway.EXIT_RESTART_NEEDED;
    }
    if (lost.get() != null) {
      // never a clean "stopped" over answered increments that are neither in the database nor in a journal
      LOG.atError().addKeyValue("event", "stopped_with_loss").log("stopped, but {}", lost.get().getMessage());
      return 1;
    }
    // everything is flushed by now, or kept in the journal for the next start
    LOG.info("stopped");
    return 0;
  }

  /** The line that refuses to run on {@code running}, or null when it is {@link #MINIMUM_JAVA} or later. */
  static String javaTooOld(Runtime.Version running, String javaHome) {
    if (running.compareToIgnoreOptional(MINIMUM_JAVA) >= 0) {
      return null;
    }
    return "Java " + MINIMUM_JAVA + " or later is needed; this is Java " + running + " (" + javaHome
      + "): run the gateway with a newer JDK";
  }

  /**
   * A start that failed: one line naming what to fix (also as a JSON line under logging.format json), the stack at
   * DEBUG only, Vert.x closed within a bound, then {@code code}.
   */
  private static int refuseStart(Vertx vertx, int code, String line, Throwable cause) {
    LOG.atError().addKeyValue("event", "start_failed").log(line);
    if (cause != null) {
      LOG.debug("what stopped the start", cause);
    }
    if (vertx != null) {
      closeVertx(vertx, FAILED_START_CLOSE_SECONDS, false);
    }
    return code;
  }

  /**
   * Ends the process with {@code code}. Shutdown hooks (the embedded databases', the cluster's) run, but get
   * {@link #EXIT_SECONDS}: whatever they wait for, the process is gone then.
   */
  private static void exit(int code) {
    Thread halt = new Thread(() -> {
      try {
        Thread.sleep(TimeUnit.SECONDS.toMillis(EXIT_SECONDS));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      Runtime.getRuntime().halt(code);
    }, "exit-bound");
    halt.setDaemon(true);
    halt.start();
    System.exit(code);
  }

  /**
   * Closing Vert.x (and leaving the cluster) is bounded: a pool that lost a request to the 5.0.10 pool's cancel-path
   * NullPointerException never finishes closing, and neither would the process. {@code warn}: say so when it did
   * not close (after a run; a failed start has said its line already).
   */
  private static void closeVertx(Vertx vertx, long seconds, boolean warn) {
    try {
      vertx.close().toCompletionStage().toCompletableFuture().get(seconds, TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      if (warn) {
        LOG.warn("Vert.x did not close within {} s; exiting anyway (nothing is pending)", seconds);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException e) {
      if (warn) {
        LOG.warn("closing Vert.x failed: {}", e.getCause().toString());
      }
    }
  }

  /** {@code --version}: the project's version, written into {@code version.properties} by the build. */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() throws IOException {
      Properties properties = new Properties();
      try (InputStream in = Main.class.getResourceAsStream("/version.properties")) {
        if (in != null) {
          properties.load(in);
        }
      }
      return new String[] {"counter-gateway " + properties.getProperty("version", "unknown")};
    }
  }

  static <T> T await(Future<T> future) throws Exception {
    try {
      return future.toCompletionStage().toCompletableFuture().get();
    } catch (ExecutionException e) {
      throw e.getCause() instanceof Exception cause ? cause : e;
    }
  }
}
