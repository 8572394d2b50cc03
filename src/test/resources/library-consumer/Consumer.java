import io.countergateway.CounterClient;
import io.countergateway.Gateway;
import io.countergateway.config.GatewayConfig;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * An application that depends on counter-gateway as a library (LibraryArtifactIT compiles it against what Maven
 * resolves for that dependency, and runs it): embeds the gateway on its default, embedded database, counts through
 * the event-bus client, and reads the SUM from the table itself. Arguments: data directory, journal directory,
 * embedded database port.
 */
public class Consumer {
  public static void main(String[] args) throws Exception {
    Vertx vertx = Vertx.vertx();
    try {
      run(vertx, args);
    } catch (Exception e) {
      // Vert.x's threads would keep the JVM alive: say why it failed, close it and exit
      System.out.println("failed: " + e);
      vertx.close();
      System.exit(1);
    }
  }

  private static void run(Vertx vertx, String[] args) throws Exception {
    JsonObject json = new JsonObject()
      .put("http", new JsonObject().put("port", 0))
      .put("database", new JsonObject().put("dataDir", args[0]).put("port", Integer.parseInt(args[2])))
      .put("journal", new JsonObject().put("dir", args[1]))
      .put("namespaces", new JsonObject().put("downloads", new JsonObject().put("slots", 4)));
    Gateway gateway = await(Gateway.start(vertx, GatewayConfig.fromJson(json)));
    CounterClient counters = new CounterClient(vertx);
    long value = await(counters.increment("downloads", "repo:42", 3)
      .compose(committed -> counters.increment("downloads", "repo:42", 4))
      .compose(committed -> counters.get("downloads", "repo:42")));
    System.out.println("value=" + value);

    Pool table = PgBuilder.pool().connectingTo(new PgConnectOptions().setHost("127.0.0.1")
      .setPort(Integer.parseInt(args[2])).setDatabase("counters").setUser("postgres")
      // the password the embedded database was given at its first start (docs/security.md)
      .setPassword(Files.readString(Path.of(args[0], "gateway-password")).strip())).using(vertx).build();
    long sum = await(table.preparedQuery("SELECT SUM(count) FROM slotted_counters WHERE record_type = $1 AND record_id = $2")
      .execute(Tuple.of("downloads", "repo:42")).map(rows -> rows.iterator().next().getLong(0)));
    System.out.println("sum=" + sum);
    await(table.close());

    await(gateway.stop());
    await(vertx.close());
    System.out.println("stopped");
  }

  private static <T> T await(Future<T> future) throws Exception {
    return future.toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS);
  }
}
