package example;

import io.countergateway.CounterClient;
import io.countergateway.Gateway;
import io.countergateway.config.GatewayConfig;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;

import java.util.concurrent.CompletionException;

/**
 * Starts a gateway inside this application's Vert.x, counts 3 downloads, prints the total, then stops everything and
 * returns. The total is printed on standard output: under {@code mvn -q exec:java}, which runs this in Maven's JVM,
 * the library's log lines do not reach the terminal.
 */
public final class CountDownloads {
  private CountDownloads() {
  }

  public static void main(String[] args) {
    Vertx vertx = Vertx.vertx();
    JsonObject config = new JsonObject()
      .put("http", new JsonObject().put("port", 0))                        // a free port: gateway.port() says which
      .put("database", new JsonObject().put("dataDir", "counter-data"))   // kind: embedded-postgres, the default
      .put("journal", new JsonObject().put("dir", "counter-journal"))
      .put("namespaces", new JsonObject().put("downloads", new JsonObject().put("slots", 4)));
    Future<Long> total = Future.succeededFuture(config)
      .map(GatewayConfig::fromJson)                                       // a bad key fails here, naming the key
      .compose(valid -> Gateway.start(vertx, valid))                       // the embedded PostgreSQL, then the gateway
      .compose(gateway -> {
        CounterClient counters = new CounterClient(vertx);
        return counters.increment("downloads", "repo:42", 3)              // completes after the commit
          .compose(committed -> counters.get("downloads", "repo:42"))     // Future<Long>: the SUM over the slots
          .eventually(gateway::stop);                                      // flushes, then stops the embedded database
      })
      .eventually(vertx::close);
    try {
      // main waits for the end, so exec:java (which runs it in Maven's JVM) sees the whole run
      System.out.println("downloads of repo:42: " + total.toCompletionStage().toCompletableFuture().join());
    } catch (CompletionException e) {
      System.err.println("counting failed: " + e.getCause().getMessage());
      throw e;
    }
  }
}
