package io.countergateway;

import io.countergateway.cluster.EventBusCluster;
import io.countergateway.config.ConfigException;
import io.countergateway.config.ConfigLoader;
import io.countergateway.config.GatewayConfig;
import io.countergateway.logging.LogSetup;
import io.countergateway.metrics.VertxMetrics;
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

import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/** {@code java -jar counter-gateway.jar [--config conf/gateway.yaml]}: runs the gateway until SIGTERM or SIGINT. */
@Command(name = "counter-gateway", mixinStandardHelpOptions = true,
  description = "Takes counter increments over HTTP and the event bus and writes them as batched slotted upserts.")
public final class Main implements Callable<Integer> {
  private static final Logger LOG = LoggerFactory.getLogger(Main.class);
  private static final long CLOSE_TIMEOUT_SECONDS = 10;

  @Option(names = {"-c", "--config"}, description = "YAML configuration file (default: ${DEFAULT-VALUE}); "
    + "every key can be overridden by a CG_* environment variable", defaultValue = "${env:CG_CONFIG:-conf/gateway.yaml}")
  private String configPath;

  public static void main(String[] args) {
    System.exit(new CommandLine(new Main()).execute(args));
  }

  @Override
  public Integer call() throws Exception {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    Vertx vertx = VertxMetrics.builder(registry).build();
    GatewayConfig config;
    try {
      config = await(ConfigLoader.load(vertx, configPath));
    } catch (ConfigException e) {
      System.err.println("configuration error: " + e.getMessage());
      await(vertx.close());
      return 2;
    }
    LogSetup.apply(config.getLogging());
    if (config.getCluster().isEnabled()) {
      await(vertx.close());
      try {
        vertx = await(EventBusCluster.join(config.getCluster()));
      } catch (Exception e) {
        System.err.println("cannot join the cluster: " + e);
        return 1;
      }
      LOG.info("joined cluster '{}' as {}:{}", config.getCluster().getName(), config.getCluster().getHost(),
        config.getCluster().getPort());
    }
    Gateway gateway;
    try {
      gateway = await(Gateway.start(vertx, config, registry));
    } catch (Exception e) {
      System.err.println("cannot start: " + e);
      await(vertx.close());
      return 1;
    }

    CountDownLatch stopped = new CountDownLatch(1);
    AtomicBoolean stopping = new AtomicBoolean();
    Vertx running = vertx;
    Runnable shutdown = () -> {
      if (stopping.compareAndSet(false, true)) {
        LOG.info("stopping: no new increments, flushing what is pending");
        gateway.stop().onComplete(done -> stopped.countDown());
      }
    };
    // Our own signal handlers, not a shutdown hook: the flush must finish before the embedded database stops
    // (Gateway.stop stops it last).
    Signal.handle(new Signal("TERM"), signal -> shutdown.run());
    Signal.handle(new Signal("INT"), signal -> shutdown.run());
    stopped.await();
    closeVertx(running);
    LOG.info("stopped");
    return 0;
  }

  /**
   * Everything is flushed by now. Closing Vert.x (and leaving the cluster) is bounded: a pool that lost a request
   * to the 5.0.10 pool's cancel-path NullPointerException never finishes closing, and neither would the process.
   */
  private static void closeVertx(Vertx vertx) {
    try {
      vertx.close().toCompletionStage().toCompletableFuture().get(CLOSE_TIMEOUT_SECONDS, TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      LOG.warn("Vert.x did not close within {} s; exiting anyway (nothing is pending)", CLOSE_TIMEOUT_SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException e) {
      LOG.warn("closing Vert.x failed: {}", e.getCause().toString());
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
