package io.countergateway.faults;

import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.Ledger;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import io.vertx.sqlclient.SqlConnection;
import org.junit.jupiter.api.AfterAll;

import java.util.UUID;
import java.util.function.Predicate;

import static io.countergateway.faults.Faults.await;
import static io.countergateway.faults.Faults.millisSince;
import static io.countergateway.faults.Faults.sleep;

/**
 * What the suites share that run a gateway in its own JVM over a journal and turn the database read-only for an
 * outage: the database writable again after the class, a table per test, the process's config, a health probe, and
 * the ledger's verdict once the table holds what it should.
 */
abstract class JournalProcessSuite extends FaultSuite {
  @Override
  @AfterAll
  void closeTools() {
    SqlConnection admin = await(database().connect(tools), 30);
    await(database().readOnly(admin, false).eventually(admin::close), 30);
    super.closeTools();
  }

  /** A table of its own for one test: {@code <what>_<random>}. */
  static String table(String what) {
    return what + "_" + UUID.randomUUID().toString().substring(0, 6);
  }

  /** One ingest verticle (one journal stream), retries quick, bodies large enough for filling batches. */
  static JsonObject processConfig(JsonObject database, String table, int port) {
    JsonObject config = GatewayFixture.baseConfig(database, table);
    config.getJsonObject("http").put("port", port).put("instances", 1);
    config.getJsonObject("limits").put("maxBodyBytes", 1_048_576);
    config.put("batching", new JsonObject().put("retryBackoff", "50ms").put("retryBackoffMax", "500ms"));
    config.put("shutdown", new JsonObject().put("timeout", "10s"));
    return config;
  }

  /** A client of its own for /health, so that probes never queue behind a load. */
  WebClient probe(int port) {
    return WebClient.create(tools, new WebClientOptions().setDefaultHost("127.0.0.1").setDefaultPort(port)
      .setConnectTimeout(1_000), new PoolOptions().setHttp1MaxSize(2));
  }

  /** Polls {@code /health/ready} (or {@code /health/accepting}) until 200 or {@code millis}; answers the last status. */
  static int awaitHealth(WebClient probe, boolean accepting, long millis) {
    long since = System.nanoTime();
    int status = accepting ? Faults.accepting(probe) : Faults.ready(probe);
    while (status != 200 && millisSince(since) < millis) {
      sleep(100);
      status = accepting ? Faults.accepting(probe) : Faults.ready(probe);
    }
    return status;
  }

  static int awaitReady(WebClient probe, long millis) {
    return awaitHealth(probe, false, millis);
  }

  /** The verdict once the table holds everything answered as counted, or after {@code millis}. */
  Ledger.Verdict settled(Ledger ledger, String table, String type, String prefix, long millis) {
    return settled(ledger, table, type, prefix, millis, verdict -> verdict.lost == 0);
  }

  /** The verdict once {@code settled} holds for it (what may still land has landed), or after {@code millis}. */
  Ledger.Verdict settled(Ledger ledger, String table, String type, String prefix, long millis,
                         Predicate<Ledger.Verdict> settled) {
    long since = System.nanoTime();
    Ledger.Verdict verdict = ledger.against(await(database().sums(tools, table, type, prefix), 30));
    while (!settled.test(verdict) && millisSince(since) < millis) {
      sleep(250);
      verdict = ledger.against(await(database().sums(tools, table, type, prefix), 30));
    }
    return verdict;
  }
}
