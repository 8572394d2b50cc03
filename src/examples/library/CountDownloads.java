import io.countergateway.CounterClient;
import io.countergateway.Gateway;
import io.countergateway.config.GatewayConfig;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Starts a gateway inside this application's Vert.x, counts 3 downloads, reads the total, then stops everything. */
public class CountDownloads {
  private static final Logger LOG = LoggerFactory.getLogger(CountDownloads.class);

  public static void main(String[] args) {
    Vertx vertx = Vertx.vertx();
    JsonObject config = new JsonObject()
      .put("http", new JsonObject().put("port", 0))                        // a free port: gateway.port() says which
      .put("database", new JsonObject().put("dataDir", "counter-data"))   // kind: embedded-postgres, the default
      .put("journal", new JsonObject().put("dir", "counter-journal"))
      .put("namespaces", new JsonObject().put("downloads", new JsonObject().put("slots", 4)));
    Future.succeededFuture(config)
      .map(GatewayConfig::fromJson)                                       // a bad key fails here, naming the key
      .compose(valid -> Gateway.start(vertx, valid))                       // the embedded PostgreSQL, then the gateway
      .compose(gateway -> {
        LOG.info("gateway started, HTTP on port {}", gateway.port());
        CounterClient counters = new CounterClient(vertx);
        return counters.increment("downloads", "repo:42", 3)              // completes after the commit
          .compose(committed -> counters.get("downloads", "repo:42"))     // Future<Long>: the SUM over the slots
          .onSuccess(value -> LOG.info("downloads of repo:42: {}", value))
          .eventually(gateway::stop);                                      // flushes, then stops the embedded database
      })
      .onFailure(failure -> LOG.error("counting failed: {}", failure.getMessage()))
      .eventually(vertx::close);                                           // the JVM exits once Vert.x is closed
  }
}
