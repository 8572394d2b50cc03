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

  @Option(names = "--instances", defaultValue = "0",
    description = "server shares; 0 = one per core, as the gateway's ingest verticles (http.instances: 0)")
  private int instances;

  @Override
  public Integer call() throws Exception {
    // the transport the gateway runs on (epoll where Netty's native library loads): Vert.x's default is NIO
    Vertx vertx = Vertx.builder().with(new VertxOptions().setPreferNativeTransport(true)).build();
    int shares = instances > 0 ? instances : PlainHttpServer.gatewayShares();
    PlainHttpServer.deploy(vertx, host, port, shares).await();
    System.err.println("plain 204 server listening on http://" + host + ":" + port + " (" + shares + " shares, "
      + (vertx.isNativeTransportEnabled() ? "native transport" : "NIO: " + vertx.unavailableNativeTransportCause()) + ")");
    CountDownLatch forever = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      vertx.close();
      forever.countDown();
    }));
    forever.await();
    return 0;
  }
}
