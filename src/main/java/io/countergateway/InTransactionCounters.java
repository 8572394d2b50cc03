package io.countergateway;

import io.countergateway.config.GatewayConfig;
import io.countergateway.internal.model.CounterKey;
import io.countergateway.internal.store.InTransactionWrites;
import io.vertx.core.Future;
import io.vertx.sqlclient.SqlClient;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Slotted increments inside the caller's own transaction, with the gateway's SQL: the counter commits or rolls back
 * with the application's write. Use it when a counter must change atomically with a row of yours (an order and the
 * product's sold count); use the gateway (HTTP, event bus) for everything else: it coalesces thousands of increments
 * into one statement, while this writes one slot row per counter in your transaction, which holds those row locks
 * until you commit. Several counters are written in key order, the order every flush uses, so these transactions
 * cannot deadlock with flushes or with each other. Not idempotent by itself: a transaction you retry after an
 * ambiguous COMMIT failure must decide on its own whether it had committed.
 *
 * <pre>{@code
 * InTransactionCounters counters = InTransactionCounters.of(gatewayConfig);
 * pool.withTransaction(conn -> conn.preparedQuery("INSERT INTO orders …").execute(order)
 *   .compose(inserted -> counters.increment(conn, "sold", productId, 1)));
 * }</pre>
 */
public final class InTransactionCounters {
  private final InTransactionWrites writes;

  private InTransactionCounters(InTransactionWrites writes) {
    this.writes = writes;
  }

  /** For the gateway's database, table and namespaces (their slot counts and the input rules). */
  public static InTransactionCounters of(GatewayConfig config) {
    return new InTransactionCounters(InTransactionWrites.of(config));
  }

  /** Adds {@code delta} to one counter, on {@code tx}: a connection inside the caller's transaction. */
  public Future<Void> increment(SqlClient tx, String type, String id, long delta) {
    return answer(writes.increment(tx, type, id, delta));
  }

  /**
   * Adds each delta to its counter in one statement (PostgreSQL) or one multi-row statement (MySQL), in key order.
   * Bad input (undeclared or windowed namespace, id or delta against the rules) fails with a
   * {@link CounterException} and writes nothing; the database's own failures come as the SQL client gives them.
   */
  public Future<Void> incrementAll(SqlClient tx, Map<Counter, Long> deltas) {
    Map<CounterKey, Long> keyed = new LinkedHashMap<>();
    deltas.forEach((counter, delta) -> keyed.put(new CounterKey(counter.type(), counter.id()), delta));
    return answer(writes.incrementAll(tx, keyed));
  }

  private static Future<Void> answer(Future<Void> written) {
    return written.recover(failure -> Future.failedFuture(CounterException.from(failure)));
  }
}
