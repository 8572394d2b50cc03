package io.countergateway.bench;

import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/** {@code java -jar target/counter-gateway-bench.jar plain-server}: the plain 204 baseline as a process of its own, for wrk. */
@Command(name = "plain-server", mixinStandardHelpOptions = true,
  description = "Runs a plain Vert.x HTTP server that answers every request with 204 (the baseline of src/DESIGN.md §7) until killed.")
public final class PlainServerCommand implements Callable<Integer> {
  @Option(names = "--host", defaultValue = "127.0.0.1", description = "address to bind (default: ${DEFAULT-VALUE})")
  private String host;

  @Option(names = "--port", defaultValue = "8081", description = "port (default: ${DEFAULT-VALUE})")
  private int port;

  @Option(names = "--instances", defaultValue = "0", description = "server shares; 0 = one per event loop, as the gateway")
  private int instances;

  @Override
  public Integer call() throws Exception {
    Vertx vertx = Vertx.vertx();
    int shares = instances > 0 ? instances : VertxOptions.DEFAULT_EVENT_LOOP_POOL_SIZE;
    PlainHttpServer.deploy(vertx, host, port, shares).await();
    System.err.println("plain 204 server listening on http://" + host + ":" + port + " (" + shares + " shares)");
    CountDownLatch forever = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      vertx.close();
      forever.countDown();
    }));
    forever.await();
    return 0;
  }
}
